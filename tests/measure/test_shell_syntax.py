"""The shell-syntax detector against the real /bin/sh.

The property checked: a command the detector passes is split by ``shlex`` (what benchlab does
without a shell) into exactly the words /bin/sh gives the program; a command it flags is one
where /bin/sh would do something else (other words, a file written, a second command run).
"""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

import pytest

from benchlab.errors import UserError
from benchlab.measure.shell_syntax import find_shell_syntax, require_no_shell_syntax

PLAIN = [
    "sleep 0.01",
    "grep -i todo README.md",
    "grep 'a b' file",
    'echo "hello world"',
    r"echo a\ b",
    "echo 'it''s' fine",   # adjacent quotes join words in sh and in shlex alike
    "printf %s 50%",
    "echo a=b",            # an assignment only counts before the command word
    "echo x#y",            # '#' inside a word is not a comment
    "echo 'a > b' \"c | d\"",
    "echo '$HOME' '*'",
    "[ -f x ]",            # the test command: '[' without a closing ']' in the word
    "echo $",              # a lone dollar is literal in sh
    "echo ab~c",
    "echo 2",
    "echo a-b_c.d/e:f,g@h%i+j",
]

SYNTAX = [
    ("echo hi > out.txt", "redirection", ">"),
    ("echo hi >> out.txt", "redirection", ">>"),
    ("cat < in.txt", "redirection", "<"),
    ("ls nothere 2>/dev/null", "redirection", "2>"),
    ("ls 2>&1", "redirection", "2>&1"),
    ("echo a | wc -c", "pipe", "|"),
    ("sleep 0.01 && true", "and-list", "&&"),
    ("false || true", "or-list", "||"),
    ("true; true", "command separator", ";"),
    ("sleep 1 &", "command separator", "&"),
    ("true\ntrue", "command separator", "newline"),
    ("(true)", "subshell", "("),
    ("echo $(date)", "command substitution", "$("),
    ("echo `date`", "command substitution", "`"),
    ('echo "`date`"', "command substitution", "`"),
    ("echo $HOME", "variable", "$HOME"),
    ('echo "$HOME"', "variable", "$HOME"),
    ("echo ${HOME}", "variable", "${HOME}"),
    ("echo $?", "variable", "$?"),
    ("echo $((1+2))", "arithmetic", "$(("),
    ("ls *.txt", "glob", "*"),
    ("ls a?.txt", "glob", "?"),
    ("ls [ab].txt", "glob", "[ab]"),
    ("ls ~", "tilde", "~"),
    ("echo hi # comment", "comment", "#"),
    ("LC_ALL=C sort x", "assignment", "LC_ALL="),
    ("echo $'a\\tb'", "shell quoting", "$'"),
    ("echo 'open", "unbalanced quote", "'"),
]


def _sh_words(command: str, cwd: Path) -> list[str] | None:
    """The words /bin/sh passes to a program for ``command`` (None: sh did more than that)."""
    script = f"set -- {command}\nprintf '%s\\0' \"$@\""
    proc = subprocess.run(["/bin/sh", "-c", script], cwd=cwd, capture_output=True, text=True,
                          env={"HOME": "/root", "PATH": "/usr/bin:/bin"})
    if proc.returncode != 0 or proc.stderr:
        return None
    return proc.stdout.split("\0")[:-1]


@pytest.mark.parametrize("command", PLAIN)
def test_plain_commands_split_like_sh(command, tmp_path):
    assert find_shell_syntax(command) == []
    require_no_shell_syntax(command)  # does not raise
    assert _sh_words(command, tmp_path) == shlex.split(command)


@pytest.mark.parametrize("command,kind,text", SYNTAX)
def test_shell_syntax_is_found(command, kind, text):
    found = find_shell_syntax(command)
    assert found, command
    assert (found[0].kind, found[0].text.startswith(text)) == (kind, True), found


@pytest.mark.parametrize("command", [c for c, kind, _ in SYNTAX
                                     if kind in ("variable", "glob", "tilde", "arithmetic",
                                                 "command substitution")])
def test_flagged_words_differ_under_sh(command, tmp_path):
    """Expansions: sh hands the program other words than the split without a shell."""
    for name in ("a1.txt", "b.txt"):
        (tmp_path / name).write_text("x")
    try:
        plain = shlex.split(command)
    except ValueError:
        return
    assert _sh_words(command.replace("ls ", "echo "), tmp_path) != [
        w for w in plain]  # noqa: C416  (the literal words the program would get)


def test_redirection_writes_a_file_only_through_sh(tmp_path):
    """The issue's example: through sh the file exists; split without a shell it would not."""
    command = "echo hi > out.txt"
    subprocess.run(["/bin/sh", "-c", command], cwd=tmp_path, check=True)
    assert (tmp_path / "out.txt").read_text() == "hi\n"
    assert shlex.split(command) == ["echo", "hi", ">", "out.txt"]
    assert find_shell_syntax(command)[0].kind == "redirection"


def test_error_names_the_syntax_and_the_fix():
    with pytest.raises(UserError) as err:
        require_no_shell_syntax("sleep 0.01 && true")
    text = str(err.value)
    assert "and-list '&&'" in text and "drop -N" in text and "\n" not in text


def test_all_findings_are_reported_in_order():
    found = find_shell_syntax("cat $F | grep x > out; echo `date`")
    assert [f.kind for f in found] == ["variable", "pipe", "redirection", "command separator",
                                       "command substitution"]
    assert [f.offset for f in found] == sorted(f.offset for f in found)


def test_ansi_c_quoting_differs_under_bash():
    """``$'...'`` is bash quoting (dash keeps the dollar): a shell-dependent word, so flagged."""
    proc = subprocess.run(["bash", "-c", "printf '%s' $'a\\tb'"], capture_output=True, text=True)
    assert proc.stdout == "a\tb"
    assert shlex.split("echo $'a\\tb'")[1] == "$a\\tb"
    assert find_shell_syntax("echo $'a\\tb'")[0].kind == "shell quoting"
