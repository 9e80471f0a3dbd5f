"""Job mail: what Slurm's ``--mail-type``/``--mail-user`` and LSF's ``bsub -B``/``-N``/``-u`` ask for.

Split so that what the front-ends and the tests need stays pure and cheap: :mod:`.asked` reads a
job's options (``sbatch`` validates ``--mail-type`` with it), :mod:`.messages` says which state move
raises which mail and writes it, :mod:`.sender` delivers it off the controller's state-change path.
"""
