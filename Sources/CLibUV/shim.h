#ifndef BQ_CLIBUV_SHIM_H
#define BQ_CLIBUV_SHIM_H
#include <uv.h>
#endif
