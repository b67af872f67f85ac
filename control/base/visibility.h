/* SPDX-License-Identifier: BSD-3-Clause */
/* MLV_HIDDEN marks a function that inline code in a module's public header
 * calls, so it must be linkable from other modules, but that is not part of
 * the module's API (the "mlv_<module>__" names). Hidden visibility keeps it
 * out of every dynamic symbol table and lets PIC callers reach it directly. */
#ifndef MLV_VISIBILITY_H
#define MLV_VISIBILITY_H

#define MLV_HIDDEN __attribute__((visibility("hidden")))

#endif
