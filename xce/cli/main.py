"""The ``xce`` command line.

Commands are loaded lazily: ``xce jobs`` imports the module that declares ``jobs`` and nothing
else, because the CLI runs in shell loops and ``xce submit`` must start, submit and exit in under
40 ms (no FastAPI, SQLAlchemy, numpy, pydantic or scheduling core in a client process).
``xce --help`` and shell completion load every module.

Adding a command takes one line in :data:`COMMANDS` (the command name and the module that
declares it) and a :class:`~xce.cli.spec.Command` (or :class:`~xce.cli.spec.Group`) in that
module's ``COMMAND_SPECS``; :mod:`xce.cli.spec` describes the declaration. The module keeps its
heavy imports inside the function the command runs::

    # xce/cli/drain.py
    from xce.cli.spec import JSON, Arg, Command, common_options

    def drain(host: str, as_json: bool, url, token, state_dir) -> None:
        from xce.cli.client import call, connect   # imports here, not at module level
        ...

    COMMAND_SPECS = [Command("drain", "Close a host to new jobs.",
                             [Arg("host", help="Host name."), JSON, *common_options()], drain,
                             examples=("xce drain node07",))]

    # xce/cli/main.py
    COMMANDS = {..., "drain": "xce.cli.drain"}

One module may declare several commands (list each name). Shared pieces: ``common_options()``
(``--url``, ``--token``, ``--state-dir``) and ``JSON`` in :mod:`xce.cli.spec`;
:func:`xce.cli.client.connect` / :func:`~xce.cli.client.call` for requests; exit codes 0 ok,
1 refused/failed, 2 usage, 3 controller unreachable.
"""

from __future__ import annotations

import sys

from xce.cli.spec import Program

#: command name -> module whose ``COMMAND_SPECS`` declares it.
COMMANDS: dict[str, str] = {
    "submit": "xce.cli.submit",
    "jobs": "xce.cli.jobs",
    "kill": "xce.cli.jobctl",
    "suspend": "xce.cli.jobctl",
    "resume": "xce.cli.jobctl",
    "hold": "xce.cli.jobctl",
    "release": "xce.cli.jobctl",
    "requeue": "xce.cli.jobctl",
    "hist": "xce.cli.jobs",
    "modify": "xce.cli.jobctl",
    "launch": "xce.cli.launch_cmd",
    "hosts": "xce.cli.cluster",
    "load": "xce.cli.cluster",
    "queues": "xce.cli.cluster",
    "drift": "xce.cli.drift",
    "acct": "xce.cli.acct",
    "pools": "xce.cli.sharing",
    "shares": "xce.cli.sharing",
    "up": "xce.cli.up",
    "down": "xce.cli.up",
    "demo": "xce.cli.demo",
    "controller": "xce.cli.controller",
    "scheduler": "xce.cli.scheduler_cmd",
    "worker": "xce.cli.worker",
    "emulate-hosts": "xce.cli.emulate",
    "config": "xce.cli.config_cmd",
    "sim": "xce.cli.sim_cmd",
    "workload": "xce.cli.whatif_cmd",
    "cluster": "xce.cli.whatif_cmd",
    "whatif": "xce.cli.whatif_cmd",
    "completion": "xce.cli.completion",
    "compat": "xce.cli.compat_cmd",
}

XCE = Program("xce", "XCE: submit and watch batch jobs, and run the cluster's services.", COMMANDS,
              examples=("xce up && xce submit -- sleep 10 && xce jobs", "xce submit --help",
                        'eval "$(xce completion bash)"'))


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["__complete"]:  # the shell scripts' question; completion reads the declarations
        from xce.cli.completion import answer

        raise SystemExit(answer(XCE, args[1:]))
    if args[:1] in (["__complete-compat"], ["__complete-values"]):  # the front-ends' and live values
        from xce.cli.completion import answer_front_end, print_values

        raise SystemExit((answer_front_end if args[0] == "__complete-compat" else print_values)(args[1:]))
    XCE.main(args)


if __name__ == "__main__":
    main()
