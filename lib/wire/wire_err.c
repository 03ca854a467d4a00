/*
 * wire_err.c - text and names for the project's error codes.  One list,
 * WIRE_ERRNO_MAP in wire.h, yields both (libuv's UV_ERRNO_MAP), because
 * codes travel between hosts and must read the same everywhere.
 */
#include "wire.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *
wire_strerror(int code)
{
    switch (code) {
    case 0:
        return "success";
#define WIRE_ERR_TEXT(name, val, msg) case val: return msg;
    WIRE_ERRNO_MAP(WIRE_ERR_TEXT)
#undef WIRE_ERR_TEXT
    default:
        break;
    }
    if (code < 0 && code > -4000)
        return strerror(-code);
    return "unknown error";
}

const char *
wire_errname(int code)
{
    switch (code) {
    case 0:
        return "OK";
#define WIRE_ERR_NAME(name, val, msg) case val: return "WIRE_" #name;
    WIRE_ERRNO_MAP(WIRE_ERR_NAME)
#undef WIRE_ERR_NAME
    case -ENOMEM: return "ENOMEM";
    case -EINVAL: return "EINVAL";
    case -ENOENT: return "ENOENT";
    case -EACCES: return "EACCES";
    case -EEXIST: return "EEXIST";
    case -EPROTO: return "EPROTO";
    case -EMSGSIZE: return "EMSGSIZE";
    case -ETIMEDOUT: return "ETIMEDOUT";
    case -ECONNREFUSED: return "ECONNREFUSED";
    case -ECONNRESET: return "ECONNRESET";
    case -EPIPE: return "EPIPE";
    default:
        return "EUNKNOWN";
    }
}

int
wire_errf(char *err, size_t errlen, int code, const char *fmt, ...)
{
    va_list ap;

    if (err != NULL && errlen > 0) {
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return code;
}
