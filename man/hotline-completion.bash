# bash completion for hotline: the commands, each command's options (read from its own --help,
# so they never drift from it), profiles for the commands that read them, programs for record.
_hotline() {
  local cur=${COMP_WORDS[COMP_CWORD]} command=${COMP_WORDS[1]:-}
  local commands="record tex report annotate html export merge diff history check sweep complexity dump help version"
  if [ "$COMP_CWORD" -eq 1 ]; then
    mapfile -t COMPREPLY < <(compgen -W "$commands" -- "$cur")
    return
  fi
  if [ "$command" = history ] && [ "$COMP_CWORD" -eq 2 ]; then
    mapfile -t COMPREPLY < <(compgen -W "add log" -- "$cur")
    return
  fi
  if [[ $cur == -* ]]; then
    local options sub=""
    [ "$command" = history ] && sub=${COMP_WORDS[2]:-}
    # shellcheck disable=SC2086 # sub is one word or none
    options=$("${COMP_WORDS[0]}" "$command" $sub --help 2>/dev/null |
      grep -oE -- '(^|[ ,])--?[A-Za-z][-A-Za-z]*' | tr -d ' ,' | sort -u)
    mapfile -t COMPREPLY < <(compgen -W "$options" -- "$cur")
    return
  fi
  case $command in
    report | annotate | html | export | merge | diff | dump | complexity)
      mapfile -t COMPREPLY < <(compgen -f -X '!*.hotline' -- "$cur"; compgen -d -- "$cur")
      ;;
    history)
      [ "${COMP_WORDS[2]:-}" = add ] &&
        mapfile -t COMPREPLY < <(compgen -f -X '!*.hotline' -- "$cur"; compgen -d -- "$cur")
      ;;
    record | sweep) mapfile -t COMPREPLY < <(compgen -c -- "$cur"; compgen -f -- "$cur") ;;
    tex)
      # After --: the TeX command, then its documents.
      if [ "${COMP_WORDS[COMP_CWORD - 1]}" = -- ]; then
        mapfile -t COMPREPLY < <(compgen -W "pdflatex pdftex tex" -- "$cur")
      else
        mapfile -t COMPREPLY < <(compgen -f -X '!*.tex' -- "$cur"; compgen -d -- "$cur")
      fi
      ;;
    help) mapfile -t COMPREPLY < <(compgen -W "record tex report annotate html export merge diff history check sweep complexity dump" -- "$cur") ;;
  esac
}
complete -F _hotline hotline
