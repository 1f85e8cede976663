# Prints what zsh completes after the words in $2 (as if TAB were pressed
# after them), one candidate a line, using the completion function in the
# directory $1. zsh completes only in an interactive line editor, so this
# starts one on a pseudo-terminal (zsh/zpty) and records each word the
# completion system adds (compadd) before the editor would show it.
# Bounded: zsh exits after the one completion (comppostfuncs), and the
# caller runs this under a timeout.
zmodload zsh/zpty
zpty z zsh -f -i
local line
zpty -w z "fpath=($1 \$fpath); PROMPT=; autoload -U compinit; compinit -u -D"
zpty -w z 'bindkey "^I" complete-word; zstyle ":completion:*" list-grouped false; zstyle ":completion:*" insert-tab false'
# A NUL line before and after the completion marks where its words are.
zpty -w z 'null-line () { echo -E - $'"'"'\0'"'"' }; compprefuncs=( null-line ); comppostfuncs=( null-line exit )'
# Every word offered goes through compadd; "CA""ND" keeps the marker out
# of the echo of this very line.
zpty -w z 'compadd () { if [[ ${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then builtin compadd "$@"; return $?; fi; typeset -a __hits; builtin compadd -A __hits "$@"; local h; for h in $__hits; do echo -E - "CA""ND:$h"; done }'
zpty -w z "$2"$'\t'
integer seen=0
while zpty -r z line; do
  [[ $line == *CAND:* ]] && print -r -- "${${line#*CAND:}%$'\r'}"
  [[ $line == *$'\0'* ]] && (( ++seen >= 2 )) && break
done
zpty -d z
