/* The glue between pdfTeX (its web2c-generated C, pdftexd.h) and hotline's hook library
   (hotline_tex.h): the procedures hotline.ch calls, reading TeX's input stack, strings and
   globals. Compiled by build-pdftex.sh inside pdfTeX's build tree. Constants tangle inlines
   (token_type codes, new_string) are repeated here with their pdftex.web names. */
#define EXTERN extern
#include <stdio.h>
#include <stdlib.h>

#include "hotline_glue.h"
#include "pdftexd.h"

extern char** argv;
extern int argc;

enum {
  kTokenListState = 0, /* token_list */
  kParameter = 0,      /* parameter: a macro's argument */
  kMacro = 5,          /* macro */
  kOutputText = 6,     /* output_text: the first token-list hook */
  kMarkText = 14,      /* mark_text */
  kEveryEofText = 20,  /* every_eof_text */
  kWriteText = 21,     /* write_text */
  kNewString = 21,     /* new_string: printing goes to the string pool */
};

int hltailflag = 0;

/* The C text of TeX string `s`. */
static void StringText(strnumber s, char* out, int size) {
  int n = 0;
  if (s >= 0 && s < strptr)
    for (poolpointer j = strstart[s]; j < strstart[s + 1] && n + 1 < size; ++j)
      out[n++] = (char)strpool[j];
  out[n] = 0;
}

void hltex_glue_cs_name(int32_t cs, char* out, int size) {
  /* TeX prints the name into the string pool and takes it back. */
  unsigned char saved_selector = selector;
  poolpointer saved_pool = poolptr;
  if (poolptr + 256 >= poolsize) {
    snprintf(out, (size_t)size, "\\cs%d", (int)cs);
    return;
  }
  selector = kNewString;
  hlprintcs(cs);
  selector = saved_selector;
  int n = 0;
  for (poolpointer j = saved_pool; j < poolptr && n + 1 < size; ++j) out[n++] = (char)strpool[j];
  out[n] = 0;
  poolptr = saved_pool;
}

static void FinishAtExit(void) {
  /* TeX's exit status: 1 after an error (history error_message_issued or fatal_error_stop). */
  if (hltex_active) hltex_finish(history >= 2 ? 1 : 0);
}

void hlstart(void) {
  hltex_start(argc, argv);
  /* Registered after the library's own: runs first, knowing TeX's history. */
  if (hltex_active) atexit(FinishAtExit);
}

/* The input level `k` (0 .. inputptr; inputptr is the current one). */
static instaterecord* Level(int k) { return k == inputptr ? &curinput : &inputstack[k]; }

static int NameKind(halfword name) {
  if (name == 18 || name == 19) return 2; /* \scantokens */
  if (name <= 17) return 0;               /* the terminal, or \read */
  return 1;
}

static int64_t LevelLine(int index) { return index == inopen ? line : linestack[index + 1]; }

void hllabelslot(int cmd) {
  for (int k = inputptr; k >= 0; --k) {
    instaterecord* r = Level(k);
    if (r->statefield == kTokenListState) {
      int type = r->indexfield;
      if (type == kMacro || (type >= kOutputText && hltex_known_list(r->startfield))) {
        hltex_label_list(cmd, r->startfield);
        return;
      }
      continue; /* backed-up or inserted tokens, parameters, templates: from below */
    }
    hltex_label_file(cmd, r->indexfield, NameKind(r->namefield), LevelLine(r->indexfield));
    return;
  }
  hltex_label_file(cmd, 0, 0, 0);
}

void hlhooklist(int type, int32_t ref) {
  if (!hltex_active) return;
  static const char* const kNames[] = {"\\output",       "\\everypar",  "\\everymath",
                                       "\\everydisplay", "\\everyhbox", "\\everyvbox",
                                       "\\everyjob",     "\\everycr",   "\\mark"};
  const char* name = "\\toks";
  if (type >= kOutputText && type <= kMarkText)
    name = kNames[type - kOutputText];
  else if (type == kEveryEofText)
    name = "\\everyeof";
  else if (type == kWriteText)
    name = "\\write";
  hltex_hook_list(type, ref, name, inopen, line);
}

void hlfilebegin(void) {
  if (!hltex_active) return;
  char name[4096];
  StringText(fullsourcefilenamestack[inopen], name, sizeof name);
  /* `line` is still the line of the file that said \input: the new file's begins below. */
  hltex_file_begin(inopen, name, line);
}

void hlfileend(void) {
  if (hltex_active && curinput.namefield > 19) hltex_file_end(curinput.indexfield);
}

/* Where the text just read (a \def's name, a token-list assignment's brace) is: the innermost
   token list with a known site of its own text, or the file below. Backed-up and inserted tokens
   (a \csname's result) and lists of no known site came from the level below. An argument was
   read where its macro was called, below that macro's own body. */
void hldefbegin(void) {
  if (!hltex_active) return;
  int via_argument = 0;
  for (int k = inputptr; k >= 0; --k) {
    instaterecord* r = Level(k);
    if (r->statefield == kTokenListState) {
      int type = r->indexfield;
      if ((type == kMacro || type >= kOutputText) && hltex_known_list(r->startfield)) {
        if (hltex_def_begin_list(r->startfield)) return;
        via_argument = 1;
        continue;
      }
      if (type == kParameter) {
        via_argument = 1;
        instaterecord* owner = k > 0 ? Level(k - 1) : 0;
        if (owner && owner->statefield == kTokenListState && owner->indexfield == kMacro) --k;
      }
      continue;
    }
    hltex_def_begin(r->indexfield, NameKind(r->namefield), LevelLine(r->indexfield),
                    via_argument);
    return;
  }
  hltex_def_begin(0, 0, 0, 0);
}

void hldefend(int32_t ref) {
  if (hltex_active) hltex_def_end(ref);
}

void hlformatdumped(void) {
  if (hltex_active) hltex_format_dumped((const char*)nameoffile + 1);
}

void hlformatloaded(void) {
  if (hltex_active) hltex_format_loaded((const char*)nameoffile + 1);
}
