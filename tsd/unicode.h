/*
 * unicode.h: the letters OpenTSDB allows in names (Java's isLetter on
 * UTF-16 code units).  Pure, thread safe.
 */
#ifndef CF_TSD_UNICODE_H
#define CF_TSD_UNICODE_H

/* 1 if code point cp is a letter to Java's Character.isLetter(char):
 * ASCII letters, and letters of the Basic Multilingual Plane. */
int tsd_is_letter(unsigned long cp);

#endif
