% hotline.ch: hotline's profiling hooks for pdfTeX (docs/tex.md). Merged by tie LAST, after
% Debian's change files (build-pdftex.sh), so each @x matches the text as they left it.
% The procedures called here are C (glue.c, hotline_glue.h); web2c learns their names from the
% @define lines at the program header. Section references are to pdftex.web.

@x [1.4] l.391 - web2c must know the hooks are procedures.
program TEX; {all file names are defined dynamically}
@y
@\@= @@define procedure hlstart;@>@\
@\@= @@define procedure hltick;@>@\
@\@= @@define procedure hllabel();@>@\
@\@= @@define procedure hlmacro();@>@\
@\@= @@define procedure hlhooklist();@>@\
@\@= @@define procedure hlendlist;@>@\
@\@= @@define procedure hltailbegin;@>@\
@\@= @@define procedure hltailend;@>@\
@\@= @@define procedure hlfilebegin;@>@\
@\@= @@define procedure hlfileend;@>@\
@\@= @@define procedure hldefbegin;@>@\
@\@= @@define procedure hldefend();@>@\
@\@= @@define procedure hlphasebegin();@>@\
@\@= @@define procedure hlphaseend();@>@\
@\@= @@define procedure hlprofile();@>@\
@\@= @@define procedure hlcounttoken;@>@\
@\@= @@define procedure hlformatdumped;@>@\
@\@= @@define procedure hlformatloaded;@>@\
program TEX; {all file names are defined dynamically}
@z

@x [18.263] the name of a macro as the profile shows it: always with \, whatever \escapechar.
else print_esc(text(p));
end;

@ We need to put \TeX's ``primitive'' control sequences into the hash
@y
else print_esc(text(p));
end;
@#
procedure hl_print_cs(@!p:pointer); {|sprint_cs| with \.{\\} as the escape character}
var @!hl_escape:integer; {the user's \.{\\escapechar}}
begin hl_escape:=escape_char; escape_char:="\"; sprint_cs(p); escape_char:=hl_escape;
end;

@ We need to put \TeX's ``primitive'' control sequences into the hash
@z

@x [22.346] begin_token_list: a token-list hook (\everypar, \output, ...) is entered.
  if t=macro then param_start:=param_ptr
  else  begin loc:=link(p);
@y
  if t=macro then param_start:=param_ptr
  else  begin loc:=link(p); hlhooklist(t,p);
@z

@x [22.347] end_token_list: a macro or hook ends (or is popped for a tail call).
begin if token_type>=backed_up then {token list to be deleted}
@y
begin if token_type>=macro then hlendlist;
if token_type>=backed_up then {token list to be deleted}
@z

@x [23.351] end_file_reading: an \input file ends.
begin first:=start; line:=line_stack[index];
@y
begin hlfileend; first:=start; line:=line_stack[index];
@z

@x [24.363] get_next: one more token read (the --cost tokens unit).
begin restart: cur_cs:=0;
@y
begin hlcounttoken; restart: cur_cs:=0;
@z

@x [24.359] a macro's argument read: a definition scanning its body takes its caller's text.
begin begin_token_list(param_stack[param_start+cur_chr-1],parameter);
@y
begin begin_token_list(param_stack[param_start+cur_chr-1],parameter); hlargument;
@z

@x [25.368] \expandafter putting back a macro after a list's last tokens (\a\fi): a tail call too.
cur_tok:=t; back_input;
end
@y
cur_tok:=t;
if t>=cs_token_flag then if eq_type(t-cs_token_flag)>=call then hltailbegin;
back_input; hltailend;
end
@z

@x [25.389] macro_call: the lists that scanning its arguments pops end before it begins: a tail call.
if info(r)<>end_match_token then
  @<Scan the parameters and make |link(r)| point to the macro body; but
    |return| if an illegal \.{\\par} is detected@>;
@<Feed the macro body and its parameters to the scanner@>;
exit:scanner_status:=save_scanner_status; warning_index:=save_warning_index;
@y
if info(r)<>end_match_token then
  begin hltailbegin;
  @<Scan the parameters and make |link(r)| point to the macro body; but
    |return| if an illegal \.{\\par} is detected@>;
  end;
@<Feed the macro body and its parameters to the scanner@>;
exit:hltailend; scanner_status:=save_scanner_status; warning_index:=save_warning_index;
@z

@x [25.415] macro_call: lists popped here end before the callee begins: TeX's tail call.
while (state=token_list)and(loc=null)and(token_type<>v_template) do
  end_token_list; {conserve stack space}
begin_token_list(ref_count,macro); name:=warning_index; loc:=link(r);
@y
hltailbegin;
while (state=token_list)and(loc=null)and(token_type<>v_template) do
  end_token_list; {conserve stack space}
hltailend;
begin_token_list(ref_count,macro); name:=warning_index; loc:=link(r);
hlmacro(warning_index,ref_count);
@z

@x [29.524] open_fmt_file: the definition sites of the format's macros are beside it.
found:loc:=j; open_fmt_file:=true;
@y
found:hlformatloaded; loc:=j; open_fmt_file:=true;
@z

@x [29.537] start_input: an \input file begins.
@<Prepare new file {\sl Sync\TeX} information@>;
@<Read the first line of the new file@>;
@y
@<Prepare new file {\sl Sync\TeX} information@>;
hlfilebegin;
@<Read the first line of the new file@>;
@z

@x [32.638] ship_out: a phase of TeX's own.
@p procedure ship_out(p:pointer); {output the box |p|}
begin
    fix_pdfoutput;
@y
@p procedure ship_out(p:pointer); {output the box |p|}
begin
    hlphasebegin(1);
    fix_pdfoutput;
@z

@x [32.638] ship_out ends.
        dvi_ship_out(p);
end;
@y
        dvi_ship_out(p);
    hlphaseend(1);
end;
@z

@x [38.815] line_break: a phase of TeX's own.
begin pack_begin_line:=mode_line; {this is for over/underfull box messages}
@y
begin hlphasebegin(2);
pack_begin_line:=mode_line; {this is for over/underfull box messages}
@z

@x [38.815] line_break ends.
@<Clean up the memory by removing the break nodes@>;
pack_begin_line:=0;
end;
@y
@<Clean up the memory by removing the break nodes@>;
pack_begin_line:=0;
hlphaseend(2);
end;
@z

@x [43.966] init_trie: a phase of TeX's own.
begin @<Get ready to compress the trie@>;
@y
begin hlphasebegin(4); @<Get ready to compress the trie@>;
@z

@x [43.966] init_trie ends.
trie_not_ready:=false;
end;
@y
trie_not_ready:=false;
hlphaseend(4);
end;
@z

@x [45.994] build_page returns from many places: it becomes build_page_inner, wrapped.
procedure build_page; {append contributions to the current page}
@y
procedure build_page_inner; {append contributions to the current page}
@z

@x [45.994] build_page: a phase of TeX's own (the user's \output runs after it, charged to the user).
until link(contrib_head)=null;
@<Make the contribution list empty by setting its tail to |contrib_head|@>;
exit:end;
@y
until link(contrib_head)=null;
@<Make the contribution list empty by setting its tail to |contrib_head|@>;
exit:end;
@#
procedure build_page;
begin hlphasebegin(3); build_page_inner; hlphaseend(3);
end;
@z

@x [46.1030] main_control: one clock read per command slot, and the slot's label.
big_switch: get_x_token;@/
reswitch: @<Give diagnostic information, if requested@>;
@y
big_switch: hltick; get_x_token;@/
reswitch: hllabel(cur_cmd); @<Give diagnostic information, if requested@>;
@z

@x [49.1218] \def and friends: the definition site of the macro, where its name is.
  e:=(cur_chr>=2); get_r_token; p:=cur_cs;
  q:=scan_toks(true,e);
@y
  e:=(cur_chr>=2); get_r_token; hldefbegin; p:=cur_cs;
  q:=scan_toks(true,e); hldefend(def_ref);
@z

@x [49.1221] \futurelet looking past a list's last tokens at the macro it puts back: a tail call.
  else  begin get_token; q:=cur_tok; get_token; back_input;
    cur_tok:=q; back_input; {look ahead, then back up}
@y
  else  begin get_token; q:=cur_tok;
    if q>=cs_token_flag then if eq_type(q-cs_token_flag)>=call then hltailbegin;
    get_token; back_input;
    cur_tok:=q; back_input; hltailend; {look ahead, then back up}
@z

@x [49.1226] token-list assignments (\everypar={...}, \toks): their definition site.
  back_input; cur_cs:=q; q:=scan_toks(false,false);
@y
  back_input; cur_cs:=q; hldefbegin; q:=scan_toks(false,false); hldefend(def_ref);
@z

@x [50.1328] store_fmt_file: the definition sites go beside the format.
while not w_open_out(fmt_file) do
  prompt_file_name("format file name",format_extension);
@y
while not w_open_out(fmt_file) do
  prompt_file_name("format file name",format_extension);
hlformatdumped;
@z

@x [51.1333] close_files_and_terminate: the rest of the run is TeX's own.
begin @<Finish the extensions@>; new_line_char:=-1;
@y
begin hlphasebegin(5); @<Finish the extensions@>; new_line_char:=-1;
@z

@x [51.1334] memory statistics as stock pdfTeX's: without \profileon, \profileoff (2 strings, 19 chars)
  wlog_ln(' out of ', max_strings-init_str_ptr:1);@/
  wlog_ln(' ',pool_ptr-init_pool_ptr:1,' string characters out of ',
    pool_size-init_pool_ptr:1);@/
@y
  wlog_ln(' out of ', max_strings-init_str_ptr+2:1);@/
  wlog_ln(' ',pool_ptr-init_pool_ptr:1,' string characters out of ',
    pool_size-init_pool_ptr+19:1);@/
@z

@x [51.1334] ... and without their 2 control sequences
  wlog_ln(' ',cs_count:1,' multiletter control sequences out of ',
    hash_size:1, '+', hash_extra:1);@/
@y
  wlog_ln(' ',cs_count-2:1,' multiletter control sequences out of ',
    hash_size:1, '+', hash_extra:1);@/
@z

@x [51.1337] the profile starts before the format is loaded.
@<Get the first line...@>=
begin @<Initialize the input routines@>;
@y
@<Get the first line...@>=
begin hlstart; @<Initialize the input routines@>;
@z

@x [53a] \profileon and \profileoff.
@d pdftex_last_extension_code  == pdftex_first_extension_code + 41
@y
@d pdftex_last_extension_code  == pdftex_first_extension_code + 41
@d profile_on_code == pdftex_first_extension_code + 42 {\.{\\profileon}}
@d profile_off_code == pdftex_first_extension_code + 43 {\.{\\profileoff}}
@z

@x
primitive("pdfresettimer",extension,reset_timer_code);@/
@y
primitive("pdfresettimer",extension,reset_timer_code);@/
primitive("profileon",extension,profile_on_code);@/
primitive("profileoff",extension,profile_off_code);@/
@z

@x
  reset_timer_code: print_esc("pdfresettimer");
@y
  reset_timer_code: print_esc("pdfresettimer");
  profile_on_code: print_esc("profileon");
  profile_off_code: print_esc("profileoff");
@z

@x
  reset_timer_code: @<Implement \.{\\pdfresettimer}@>;
@y
  reset_timer_code: @<Implement \.{\\pdfresettimer}@>;
  profile_on_code: hlprofile(1);
  profile_off_code: hlprofile(0);
@z
