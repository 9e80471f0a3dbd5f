"""LSF commands (``bsub``, ``bjobs``, ...) over XCE.

One module per program (``main(argv) -> int``, see :mod:`xce.compat.programs`), and the pieces
they share: :mod:`._args` (LSF's one-dash options, usage errors, exit 255), :mod:`._client`
(requests, refusals as LSF words), :mod:`._jobs` (ids, names, the one filtered listing),
:mod:`._states` (STAT words, exit codes, ``TERM_*`` reasons from XCE's end codes), :mod:`._table`
(``-o``/``-noheader``/``-w``/``-json``), :mod:`._long` (``-l`` forms), :mod:`._act` (bkill, bstop,
bresume, brequeue), :mod:`._conf` and :mod:`._cluster` (what the probes report). Each program
imports only what it uses, so it starts about as fast as ``xce`` does.
"""
