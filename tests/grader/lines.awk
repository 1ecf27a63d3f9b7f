# The lines a grade prints for one lecture (tests/grader/grade.sh), and the
# report's rows, in one pass: for each check and N of the lecture's list, in
# order, its line dotted out to its result, and under a failed one the lines
# that say why and how to run it again. An end-to-end check (lcK.0x) that fails
# after a finer check failed says where to look first.
# Files, in order: the checks (program|id|points|ranks|budget|title), the
# verdicts (id|n|ok or fail|seconds|message; the last for an id and N counts)
# and the list (program|n|id). Settings: k (the lecture), built (1 if the
# learner's files built), solution (1: the reference), report (the file the
# rows are appended to: points, got, seconds, lecture, check, N, title and the
# lines under it, tab separated, a newline as \n and a backslash as \\).
# One process for the lecture: a process per field of each row cost a second a
# grade, as long as the checks of a killed mutant took to run.
# usage: awk -F'|' -v k=K -v built=0|1 -v solution=0|1 -v report=FILE -f lines.awk CHECKS VERDICTS LIST

# The fields of a line from field n on, with the bars between them.
function from(s, n,   i) {
  for (i = 1; i < n; i++) {
    if (!index(s, "|")) return ""
    s = substr(s, index(s, "|") + 1)
  }
  return s
}

function dots(s,   n, d) {
  n = 78 - length(s)
  d = ""
  while (n-- > 0) d = d "."
  return s " " d
}

function escaped(s) {
  gsub(/\\/, "&&", s)  # each backslash twice
  gsub(/\t/, " ", s)
  gsub(/\n/, "\\n", s)
  return s
}

FILENAME == ARGV[1] {
  if (!($2 in points)) { points[$2] = $3; title[$2] = from($0, 6) }
  next
}
FILENAME == ARGV[2] {
  verdict[$1 "|" $2] = $3; secs[$1 "|" $2] = $4; msg[$1 "|" $2] = from($0, 5)
  if ($3 == "fail") failed[$1] = 1
  next
}
{ row[++rows] = $0 }

END {
  first_fine = ""
  for (r = 1; r <= rows && first_fine == ""; r++) {
    split(row[r], f, "|")
    if (f[3] !~ /\.0[a-z]$/ && failed[f[3]]) first_fine = f[3]
  }
  for (r = 1; r <= rows; r++) {
    split(row[r], f, "|")
    n = f[2]; id = f[3]; key = id "|" n
    line = dots(id " " title[id] " (N=" n ")")
    if (!built) {
      v = "fail"; s = 0; detail = "your files do not build (the compiler's errors are above)"
      print line " FAIL 0/" points[id] " (does not build)"
    } else {
      v = verdict[key]; s = secs[key]; detail = ""
      if (v == "ok") print line " OK " points[id] "/" points[id] " (" s "s)"
      else {
        detail = msg[key] != "" ? msg[key] : "no verdict came back"
        if (first_fine != "" && first_fine != id) {
          if (id ~ /\.0[a-z]$/) detail = detail "\nthis follows from " first_fine " failing: fix that first"
          else if (msg[key] ~ /^it (stopped|crashed): /)
            detail = detail "\nthis may follow from " first_fine " failing: fix that first"
        }
        detail = detail "\nrerun: make grade LC=" k " CHECK=" id " N=" n (solution == 1 ? " SOLUTION=1" : "")
        print line " FAIL 0/" points[id] " (" (s == "" ? 0 : s) "s)"
        text = detail
        gsub(/\n/, "\n    ", text)
        print "    " text
      }
    }
    printf "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", points[id], v == "ok" ? points[id] : 0, s == "" ? 0 : s, k, id, n,
      title[id], escaped(detail) >>report
  }
}
