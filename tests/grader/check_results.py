#!/usr/bin/env python3
"""Checks a grade's results file against its format's documented fields, with
Python's own parsers (not the code that wrote it), and against the grade's
terminal output: the same checks, points and total.

  gradescope: Gradescope's autograder specification: a top-level "score" and
    "tests", each test with "name", "score", "max_score", "status" (passed or
    failed) and "output" strings and numbers as documented.
  junit: the JUnit XML report's elements: testsuites > testsuite > testcase,
    with tests and failures counted right and a failure element with a message
    for every check that lost its points.

usage: tests/grader/check_results.py gradescope|junit RESULTS TERMINAL_OUTPUT
Exits 1, saying what is wrong, on any difference."""
import json
import re
import sys
import xml.etree.ElementTree as ET


def terminal_checks(path):
    """(check line, points got, points) for each check the terminal printed, and the total."""
    rows, total = [], None
    for line in open(path, encoding="utf-8", errors="replace"):  # a learner's bytes, as the file has them
        m = re.match(r"^(lc\d+\.\w+ .*\(N=\d+\)) \.* (OK|FAIL) (\d+)/(\d+) ", line)
        if m:
            rows.append((m.group(1), int(m.group(3)), int(m.group(4))))
        m = re.match(r"^Score: (\d+)/(\d+)$", line.strip())
        if m:
            total = (int(m.group(1)), int(m.group(2)))
    return rows, total


def fail(why):
    print("results file: " + why)
    sys.exit(1)


def gradescope(path, rows, total):
    doc = json.load(open(path, encoding="utf-8"))
    if not isinstance(doc, dict) or not isinstance(doc.get("tests"), list):
        fail("no top-level object with a tests list")
    if not isinstance(doc.get("score"), (int, float)):
        fail("no top-level score")
    tests = doc["tests"]
    if len(tests) != len(rows):
        fail("%d tests, the terminal shows %d checks" % (len(tests), len(rows)))
    for t, (name, got, points) in zip(tests, rows):
        for key, kind in (("name", str), ("score", (int, float)), ("max_score", (int, float)), ("output", str),
                          ("status", str)):
            if not isinstance(t.get(key), kind):
                fail("test %r: %s missing or of the wrong type" % (t.get("name"), key))
        if t["name"] != name or t["score"] != got or t["max_score"] != points:
            fail("test %r %s/%s, the terminal: %r %d/%d" % (t["name"], t["score"], t["max_score"], name, got, points))
        if t["status"] != ("passed" if got == points else "failed"):
            fail("test %r: status %r" % (name, t["status"]))
        if got < points and not t["output"]:
            fail("test %r failed with no output" % name)
    if (doc["score"], sum(t["max_score"] for t in tests)) != total:
        fail("score %s of %s, the terminal says %s" % (doc["score"], sum(t["max_score"] for t in tests), total))


def junit(path, rows, total):
    root = ET.parse(path).getroot()
    if root.tag != "testsuites":
        fail("the root is <%s>, not <testsuites>" % root.tag)
    cases = []
    for suite in root.findall("testsuite"):
        mine = suite.findall("testcase")
        failed = [c for c in mine if c.find("failure") is not None]
        if int(suite.get("tests")) != len(mine) or int(suite.get("failures")) != len(failed):
            fail("testsuite %r counts %s tests, %s failures; it holds %d, %d" %
                 (suite.get("name"), suite.get("tests"), suite.get("failures"), len(mine), len(failed)))
        for c in mine:
            if c.get("classname") is None or c.get("name") is None or c.get("time") is None:
                fail("a testcase without classname, name or time")
            f = c.find("failure")
            if f is not None and not f.get("message"):
                fail("testcase %r: a failure with no message" % c.get("name"))
        cases += mine
    if int(root.get("tests")) != len(cases):
        fail("testsuites counts %s tests; it holds %d" % (root.get("tests"), len(cases)))
    if len(cases) != len(rows):
        fail("%d testcases, the terminal shows %d checks" % (len(cases), len(rows)))
    for c, (name, got, points) in zip(cases, rows):
        if c.get("name") != name or (c.find("failure") is None) != (got == points):
            fail("testcase %r, the terminal: %r %d/%d" % (c.get("name"), name, got, points))
    if int(root.get("failures")) != sum(got < points for _, got, points in rows):
        fail("testsuites counts %s failures" % root.get("failures"))


if __name__ == "__main__":
    if len(sys.argv) != 4 or sys.argv[1] not in ("gradescope", "junit"):
        print(__doc__.strip().splitlines()[-2])
        sys.exit(2)
    rows, total = terminal_checks(sys.argv[3])
    if not rows or total is None:
        fail("the terminal output shows no checks")
    (gradescope if sys.argv[1] == "gradescope" else junit)(sys.argv[2], rows, total)
    print("%s results: %d checks, %d/%d, as on the terminal" % (sys.argv[1], len(rows), total[0], total[1]))
