"""The service's command line (`flask --app service …`) run in-process through Flask's CLI
runner: a process start costs seconds."""

from __future__ import annotations


def command_line(app):
    """`run(*args, input=None, ok=True)`: the result of the command `args` on `app`; one
    expected to succeed (`ok`) fails the test when it exits otherwise."""
    runner = app.test_cli_runner()

    def run(*args, input=None, ok=True):
        result = runner.invoke(args=list(args), input=input)
        if ok:
            assert result.exit_code == 0, (result.output, result.exception)
        return result

    return run


def last_line(result) -> str:
    """Where the commands print what they made (an id, a key)."""
    return result.stdout.strip().splitlines()[-1]
