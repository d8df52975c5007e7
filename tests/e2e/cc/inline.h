/*
 * inline.h - C99 inline functions with no external definition anywhere:
 * each translation unit that includes this gets only inline definitions.
 * Plainly this links at -O2 (every call is inlined); at -O0 only because
 * they are always_inline there, as real projects do for hot helpers.
 */
#ifndef SS_CC_INLINE_H
#define SS_CC_INLINE_H

#ifdef __OPTIMIZE__
#define SS_INLINE inline
#else
#define SS_INLINE inline __attribute__((always_inline))
#endif

SS_INLINE int sq(int x)
{
	return x * x;
}

SS_INLINE int cube(int x)
{
	return sq(x) * x;
}

#endif /* SS_CC_INLINE_H */
