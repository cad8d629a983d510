/*
 * jackson.c: reading the JSON of a request as OpenTSDB's Jackson 2.9
 * reads it into Java fields (net/internal.h): a boolean field takes
 * "true" or 1, a long "1000" or 1000.7, a String a number's text; a
 * value of another type fails the whole parse, which OpenTSDB answers
 * with 400 "Unable to parse the given JSON" and Jackson's reason.
 */
#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/internal.h"

/* String v's text without the spaces and control bytes around it, as
 * Jackson trims a String it parses as a boolean or a number: *n bytes. */
static const char *trimmed(json_t *v, size_t *n)
{
	const char *s = json_string_value(v);

	*n = json_string_length(v);
	while (*n && (unsigned char)*s <= ' ')
		s++, (*n)--;
	while (*n && (unsigned char)s[*n - 1] <= ' ')
		(*n)--;
	return s;
}

/* StdDeserializer._parseBooleanPrimitive */
int net_jackson_bool(void *jv, int *out, char *jwhy, size_t jn)
{
	json_t *v = jv;
	const char *s;
	size_t n;

	*out = 0;
	if (!v || json_is_null(v) || json_is_false(v))
		return 0;
	if (json_is_true(v))
		return *out = 1, 0;
	if (json_is_integer(v))
		return *out = json_integer_value(v) != 0, 0;
	if (!json_is_string(v)) {
		snprintf(jwhy, jn, "Cannot deserialize instance of `boolean` "
			 "out of %s token", json_is_real(v) ? "VALUE_NUMBER_FLOAT"
			 : json_is_array(v) ? "START_ARRAY" : "START_OBJECT");
		return 1;
	}
	s = trimmed(v, &n);
	if ((n == 4 && (!memcmp(s, "true", 4) || !memcmp(s, "True", 4))))
		return *out = 1, 0;
	if (!n || (n == 5 && (!memcmp(s, "false", 5) ||
			      !memcmp(s, "False", 5))) ||
	    (n == 4 && !memcmp(s, "null", 4)))
		return 0;
	snprintf(jwhy, jn, "Cannot deserialize value of type `boolean` from "
		 "String \"%.80s\": only \"true\" or \"false\" recognized",
		 json_string_value(v));
	return 1;
}

/* StdDeserializer._parseLongPrimitive and _parseIntPrimitive */
int net_jackson_long(void *jv, long long *out, const char *type, char *jwhy,
		     size_t jn)
{
	json_t *v = jv;
	const char *s;
	char num[32], *end;
	size_t n;

	*out = 0;
	if (json_is_null(v))
		return 0;
	if (json_is_integer(v))
		return *out = json_integer_value(v), 0;
	if (json_is_real(v)) {
		/* getValueAsLong: the integer part, or ParserBase's
		 * reportOverflowLong */
		double d = json_real_value(v);
		if (d >= 9.2233720368547758e18 || d < -9.2233720368547758e18 ||
		    d != d) {
			snprintf(jwhy, jn, "Numeric value (%g) out of range of "
				 "long", d);
			return 1;
		}
		*out = (long long)d;
		return 0;
	}
	if (!json_is_string(v)) {
		snprintf(jwhy, jn, "Cannot deserialize instance of `%s` out "
			 "of %s token", type, json_is_true(v) ? "VALUE_TRUE" :
			 json_is_false(v) ? "VALUE_FALSE" :
			 json_is_array(v) ? "START_ARRAY" : "START_OBJECT");
		return 1;
	}
	s = trimmed(v, &n);
	if (!n || (n == 4 && !memcmp(s, "null", 4)))
		return 0;
	/* Long.parseLong: an optional sign, then decimal digits */
	if (n < sizeof num && (isdigit((unsigned char)s[0]) ||
			       ((s[0] == '+' || s[0] == '-') && n > 1 &&
				isdigit((unsigned char)s[1])))) {
		memcpy(num, s, n);
		num[n] = '\0';
		errno = 0;
		*out = strtoll(num, &end, 10);
		if (!*end && errno != ERANGE)
			return 0;
	}
	*out = 0;
	snprintf(jwhy, jn, "Cannot deserialize value of type `%s` from "
		 "String \"%.80s\": not a valid %s value", type,
		 json_string_value(v), type);
	return 1;
}

/* DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, on by default */
int net_jackson_unknown(void *jo, const char *known, const char *class,
			char *jwhy, size_t jn)
{
	json_t *o = jo;
	const char *k, *n;
	json_t *v;

	json_object_foreach(o, k, v) {
		for (n = known; *n && strcmp(n, k); n += strlen(n) + 1)
			;
		if (!*n) {
			snprintf(jwhy, jn, "Unrecognized field \"%.80s\" "
				 "(class %s), not marked as ignorable", k,
				 class);
			return 1;
		}
	}
	return 0;
}
