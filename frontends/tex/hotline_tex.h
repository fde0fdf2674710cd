/* The hook library of hotline's profiling pdfTeX (docs/tex.md): a C interface that knows
   nothing of TeX's data structures. glue.c, compiled inside pdfTeX's build against its
   generated header, turns TeX's state into these calls; hotline.ch calls the glue.
   Every function does nothing unless HOTLINE_TEX_OUTPUT named a profile to write. */
#ifndef HOTLINE_FRONTENDS_TEX_HOTLINE_TEX_H
#define HOTLINE_FRONTENDS_TEX_HOTLINE_TEX_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Whether a profile is being written (set once by hltex_start). */
extern int hltex_active;
/* Tokens TeX has read (get_next): the deterministic cost of --cost tokens. */
extern uint64_t hltex_tokens;

void hltex_start(int argc, char** argv);
/* main_control's big_switch: one clock read; the time since the previous one goes to the slot
   labelled last. */
void hltex_tick(void);
/* The slot's command (cur_cmd, or kCommandCharacters for main_loop's runs) and where its token
   came from: a token list whose definition site is known (ref), or a file level. */
void hltex_label_list(int cmd, int32_t ref);
void hltex_label_file(int cmd, int32_t index, int32_t name_kind, int64_t line);
/* Whether the token list `ref` has a known definition site (a \def or a token-list assignment
   was seen for it, in this run or in the format). */
int hltex_known_list(int32_t ref);

/* A macro (control sequence `cs`, body `ref`) is entered, while the innermost file (input level
   `index`) is at `line`: a file calling it is shown at that line. Its name is asked for
   (hltex_glue_cs_name) once per control sequence. */
void hltex_macro(int32_t cs, int32_t ref, int32_t index, int64_t line);
void hltex_hook_list(int32_t type, int32_t ref, const char* name, int32_t index, int64_t line);
/* A token list of type macro or hook ends; `tail` when popped by macro_call's clean-up. */
void hltex_end_list(int tail);

/* Files: \input (a real file at input level `index`, read from a file at `caller_line`), and
   its end. */
void hltex_file_begin(int32_t index, const char* name, int64_t caller_line);
void hltex_file_end(int32_t index);

/* Definition sites: where the text of a \def (its name) or token-list assignment (its braces)
   is, and then the token list it made. The text is in a token list with a known site (a macro's
   body, a hook): hltex_def_begin_list takes its site, or returns 0 when the list may hold its
   caller's arguments rather than text of its own (a macro made it at run time, def_sites.h),
   and the text is then looked for below. Or the text is in a file level at `line`; `via_argument` when
   it came there as a macro's argument, read from the file since the macro call the file's
   current expansion began with (whose line is then the site: \newcommand's, not the line its
   arguments end on). */
int hltex_def_begin_list(int32_t ref);
/* Set between hltex_def_begin_list and hltex_def_end: a definition whose site is a list's. */
extern int hltex_def_from_list;
/* That definition read one of its defining macro's arguments: its body may hold the caller's
   text (LaTeX's \reserved@a, built of \newcommand's arguments). */
void hltex_def_read_argument(void);
void hltex_def_begin(int32_t index, int32_t name_kind, int64_t line, int via_argument);
void hltex_def_end(int32_t ref);

/* TeX's own phases (shipout, line breaking, page building, hyphenation trie). */
enum {
  kPhaseShipout = 1,
  kPhaseLineBreak = 2,
  kPhaseBuildPage = 3,
  kPhaseInitTrie = 4,
  kPhaseFinish = 5 /* close_files_and_terminate: fonts and the PDF's end */
};
void hltex_phase_begin(int phase);
void hltex_phase_end(int phase);

/* \profileon (1) and \profileoff (0). */
void hltex_profile(int on);

/* The definition sites live beside the format: FMT.hotline-defs. */
void hltex_format_dumped(const char* fmt_path);
void hltex_format_loaded(const char* fmt_path);

/* End of the run, with the exit status TeX gives (glue.c calls it at exit). */
void hltex_finish(int exit_code);

/* Provided by the glue: the name of control sequence `cs` as \show prints it, into `out`
   (size bytes, NUL-terminated). */
void hltex_glue_cs_name(int32_t cs, char* out, int size);

#ifdef __cplusplus
}
#endif

#endif
