/* hooks-empty.c - the floor: instrumentation hooks that do nothing. */
void __cyg_profile_func_enter(void *fn, void *site) { (void)fn; (void)site; }
void __cyg_profile_func_exit(void *fn, void *site) { (void)fn; (void)site; }
