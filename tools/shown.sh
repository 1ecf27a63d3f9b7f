# shown VALUE: a value given to a tool, as its messages show it: one line, a
# backslash, newline, carriage return and tab escaped as C writes them, any
# other control character as '?'. Sourced by the tools that echo what they
# were given (tools/launch, tools/offline_pack.sh, make grade and make mine).
shown() {
  printf '%s' "$1" | LC_ALL=C awk 'BEGIN { RS = "\001\002\003" }
    { gsub(/\\/, "\\\\\\\\"); gsub(/\n/, "\\n"); gsub(/\r/, "\\r"); gsub(/\t/, "\\t"); gsub(/[\001-\037\177]/, "?")
      printf "%s", $0 }'
}
