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

/* glue.c */
void hlstart(void);
void hllabel(int cmd);
void hlmacro(int32_t cs, int32_t ref);
void hlhooklist(int type, int32_t ref);
void hlendlist(void);
void hltailbegin(void);
void hltailend(void);
void hlfilebegin(void);
void hlfileend(void);
void hldefbegin(void);
void hldefend(int32_t ref);
void hlformatdumped(void);
void hlformatloaded(void);

#endif
