/*
 * version.h - the stepscope version string the command prints and writes
 * into every trace it exports.  Keep it equal to VERSION in the Makefile.
 */
#ifndef SS_VERSION_H
#define SS_VERSION_H

#define SS_TOOL_VERSION "0.1.0"

#endif /* SS_VERSION_H */
