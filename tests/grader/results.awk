# The report of a grade (tests/grader/grade.sh: one row per check and N, tab
# separated: points, got, seconds, lecture, check, N, title, the lines under
# it with \n for a newline and \\ for a backslash) as a file for a course's
# tools. format=gradescope: Gradescope's results.json (the autograder
# specification: a total score and a test per row with name, number, score,
# max_score, status and output); format=junit: a JUnit XML report (testsuites,
# a testsuite per lecture, a testcase per row, failure elements for what
# failed). seconds: the grade's wall time.
# usage: awk -F'\t' -v format=gradescope -v seconds=S -f tests/grader/results.awk REPORT

# The lines under a check, as they were.
function unescape(s,   out, i, c) {
  out = ""
  for (i = 1; i <= length(s); i++) {
    c = substr(s, i, 1)
    if (c == "\\" && i < length(s)) {
      i++
      c = substr(s, i, 1)
      out = out (c == "n" ? "\n" : c)
    } else out = out c
  }
  return out
}

# s with every byte that is not part of a well-formed UTF-8 sequence (a
# learner's program may print any bytes) replaced by U+FFFD, as Python's
# errors="replace" does: a results file must be valid UTF-8, or the course's
# tool drops all of it. (Run with LC_ALL=C: one byte per character.)
function utf8(s,   out, i, n, b, c, k, need, lo, hi, ok) {
  out = ""
  n = length(s)
  for (i = 1; i <= n; i++) {
    b = byte[substr(s, i, 1)]
    if (b < 128) { out = out substr(s, i, 1); continue }
    need = b >= 194 && b <= 223 ? 1 : b >= 224 && b <= 239 ? 2 : b >= 240 && b <= 244 ? 3 : 0
    lo = b == 224 ? 160 : b == 240 ? 144 : 128  # no overlong forms,
    hi = b == 237 ? 159 : b == 244 ? 143 : 191  # no surrogates, nothing past U+10FFFF
    ok = need > 0 && i + need <= n
    for (k = 1; ok && k <= need; k++) {
      c = byte[substr(s, i + k, 1)]
      ok = k == 1 ? c >= lo && c <= hi : c >= 128 && c <= 191
    }
    if (ok) { out = out substr(s, i, need + 1); i += need }
    else out = out "\357\277\275"
  }
  return out
}

function json(s,   out, i, c) {
  s = utf8(s)
  out = ""
  for (i = 1; i <= length(s); i++) {
    c = substr(s, i, 1)
    if (c == "\\") out = out "\\\\"
    else if (c == "\"") out = out "\\\""
    else if (c == "\n") out = out "\\n"
    else if (c == "\t") out = out "\\t"
    else if (index(ctl, c)) out = out sprintf("\\u%04x", index(ctl, c))
    else out = out c
  }
  return "\"" out "\""
}

function xml(s) {
  s = utf8(s)
  gsub(/&/, "\\&amp;", s); gsub(/</, "\\&lt;", s); gsub(/>/, "\\&gt;", s)
  gsub(/"/, "\\&quot;", s); gsub(/'/, "\\&apos;", s)
  gsub(/[\001-\010\013\014\016-\037]/, "", s)  # not allowed in XML 1.0
  return s
}

BEGIN {
  for (i = 1; i < 32; i++) ctl = ctl sprintf("%c", i)
  for (i = 1; i < 256; i++) byte[sprintf("%c", i)] = i
}

{
  n++
  points[n] = $1; got[n] = $2; secs[n] = $3; lecture[n] = $4; check[n] = $5; ranks[n] = $6; title[n] = $7
  out[n] = unescape($8)
  name[n] = $5 " " $7 " (N=" $6 ")"
  total += $1; score += $2
  if (!(($4) in tests)) order[++lectures] = $4
  tests[$4]++; failures[$4] += $2 < $1; time[$4] += $3
}

END {
  if (format == "gradescope") {
    printf "{\n  \"score\": %d,\n  \"execution_time\": %d,\n", score, seconds
    printf "  \"output\": %s,\n", json(sprintf("Score: %d/%d", score, total))
    printf "  \"tests\": [\n"
    for (i = 1; i <= n; i++)
      printf "    {\"name\": %s, \"number\": %s, \"score\": %d, \"max_score\": %d, \"status\": \"%s\", \"output\": %s}%s\n",
        json(name[i]), json(check[i] " N=" ranks[i]), got[i], points[i], got[i] == points[i] ? "passed" : "failed",
        json(out[i]), i < n ? "," : ""
    printf "  ]\n}\n"
  } else {
    printf "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    printf "<testsuites name=\"make grade\" tests=\"%d\" failures=\"%d\" time=\"%d\">\n", n, fails(), seconds
    for (j = 1; j <= lectures; j++) {
      k = order[j]
      printf "  <testsuite name=\"lecture %s\" tests=\"%d\" failures=\"%d\" errors=\"0\" skipped=\"0\" time=\"%.1f\">\n",
        k, tests[k], failures[k], time[k]
      for (i = 1; i <= n; i++) {
        if (lecture[i] != k) continue
        printf "    <testcase classname=\"lc%s\" name=\"%s\" time=\"%s\"", k, xml(name[i]), secs[i]
        if (got[i] == points[i]) { printf "/>\n"; continue }
        split(out[i], first, "\n")
        printf ">\n      <failure message=\"%s\" type=\"%s\">%s</failure>\n    </testcase>\n",
          xml(first[1]), xml("0/" points[i] " points"), xml(out[i])
      }
      printf "  </testsuite>\n"
    }
    printf "</testsuites>\n"
  }
}

function fails(   i, f) { for (i = 1; i <= n; i++) f += got[i] < points[i]; return f }
