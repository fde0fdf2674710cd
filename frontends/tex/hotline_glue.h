/* Included (-include) into pdfTeX's generated C by build-pdftex.sh: the hooks hotline.ch calls.
   The ones on TeX's hottest paths are macros that test hltex_active first, so that an engine
   run without HOTLINE_TEX_OUTPUT pays a load and a branch. */
#ifndef HOTLINE_FRONTENDS_TEX_HOTLINE_GLUE_H
#define HOTLINE_FRONTENDS_TEX_HOTLINE_GLUE_H

#include <stdint.h>

#include "hotline_tex.h"

#define hlcounttoken() (++hltex_tokens)
#define hltick()                    \
  do {                              \
    if (hltex_active) hltex_tick(); \
  } while (0)
#define hlphasebegin(n)                     \
  do {                                      \
    if (hltex_active) hltex_phase_begin(n); \
  } while (0)
#define hlphaseend(n)                     \
  do {                                    \
    if (hltex_active) hltex_phase_end(n); \
  } while (0)
#define hlprofile(on)                    \
  do {                                   \
    if (hltex_active) hltex_profile(on); \
  } while (0)
/* macro_call's hooks (every macro expansion: millions in a LaTeX run) call the library
   directly, with TeX's in_open and line (globals of pdftexd.h where they expand). */
#define hltailbegin() (hltailflag = 1)
#define hltailend() (hltailflag = 0)
#define hlmacro(cs, ref)                                      \
  do {                                                        \
    if (hltex_active) hltex_macro((cs), (ref), inopen, line); \
  } while (0)
#define hlendlist()                               \
  do {                                            \
    if (hltex_active) hltex_end_list(hltailflag); \
  } while (0)
/* A definition made from a list's text read an argument (def_sites.h's borrowed). */
#define hlargument()                                       \
  do {                                                     \
    if (hltex_def_from_list) hltex_def_read_argument();    \
  } while (0)
#define hllabel(cmd)                    \
  do {                                  \
    if (hltex_active) hllabelslot(cmd); \
  } while (0)

/* glue.c */
/* Set while macro_call pops the lists that end before its callee begins (a tail call). */
extern int hltailflag;
void hlstart(void);
void hllabelslot(int cmd);
void hlhooklist(int type, int32_t ref);
void hlfilebegin(void);
void hlfileend(void);
void hldefbegin(void);
void hldefend(int32_t ref);
void hlformatdumped(void);
void hlformatloaded(void);

#endif
