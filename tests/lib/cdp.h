/*
 * cdp.h - drive a headless Chromium from a test over the DevTools
 * protocol on --remote-debugging-pipe (fd 3 in, fd 4 out, messages ended
 * by a NUL byte): open a page, evaluate script in it, move the real mouse,
 * take a screenshot.  No websocket, no npm package: the browser and cJSON.
 *
 * Every call waits for its own reply (events in between are dropped) at
 * most SS_CDP_TIMEOUT_S seconds; a failure leaves its reason in
 * c->why and returns an error, never blocks the test for ever.
 */
#ifndef SS_TEST_CDP_H
#define SS_TEST_CDP_H

#include <stddef.h>
#include <sys/types.h>

#define SS_CDP_TIMEOUT_S 60

struct ss_cdp {
	pid_t pid;              /* the browser */
	int to, from;           /* our ends of its fd 3 and fd 4 */
	int next_id;
	char session[128];      /* the page's session (flattened) */
	char *buf;              /* bytes read, not yet a whole message */
	size_t len, cap;
	char why[512];
};

/* Start browser (a path) headless with a fresh profile in profile_dir
 * (its log in profile_dir/chrome.log), open url in a width x height
 * page and wait until it has loaded.  0, or -1 with c->why set. */
int ss_cdp_open(struct ss_cdp *c, const char *browser, const char *profile_dir,
		const char *url, int width, int height);
/* Send method with params (a JSON object as text, NULL for {}) to the
 * page (page != 0) or the browser, and return the reply's "result" as
 * JSON text (malloc'ed), or NULL with c->why set (an "error" reply too). */
char *ss_cdp_call(struct ss_cdp *c, int page, const char *method, const char *params);
/* The value of JavaScript expression expr in the page, converted with
 * String() (malloc'ed), or NULL with c->why set (an exception too). */
char *ss_cdp_eval(struct ss_cdp *c, const char *expr);
/* A real mouse move to (x, y), CSS pixels of the viewport.  0 or -1. */
int ss_cdp_mouse_move(struct ss_cdp *c, double x, double y);
/* A screenshot of the viewport region (x, y, w, h) written as a PNG to
 * path.  0 or -1. */
int ss_cdp_screenshot(struct ss_cdp *c, double x, double y, double w, double h,
		      const char *path);
/* Close the browser and reap it. */
void ss_cdp_close(struct ss_cdp *c);

#endif /* SS_TEST_CDP_H */
