#ifndef BQ_CGLIBCMALLOC_SHIM_H
#define BQ_CGLIBCMALLOC_SHIM_H
/* glibc's allocator controls (malloc_trim), which the Glibc module does not bring. */
#include <malloc.h>
#endif
