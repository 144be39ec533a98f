/* kernel_name.h: how long a kernel name may be, one limit for every stage that holds one: the
 * generator (gen_variant.name), the database readers (db_candidate, db_selection_text), the worker
 * and libktrt (ktrt_kernel, ktrt_selection, and ktrt_choice.kernel in the public runtime/ktrt.h,
 * which spells the number out). Bytes with the NUL: names have at most KT_KERNEL_NAME_MAX - 1
 * characters. A reader that meets a longer name says so, naming the row, and leaves the row out. */
#ifndef KT_KERNEL_NAME_H
#define KT_KERNEL_NAME_H

#define KT_KERNEL_NAME_MAX 192
#define KT_KERNEL_NAME_SCAN "%191s"   /* sscanf conversion for one name: KT_KERNEL_NAME_MAX - 1 */

#endif
