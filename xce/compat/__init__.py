"""LSF and Slurm front-ends: ``bsub``, ``bjobs``, ..., ``sbatch``, ``squeue``, ... over XCE's REST API.

Most work on an LSF or Slurm cluster is submitted by workflow tools that run these programs and parse
what they print, so each one translates its options to XCE's model, asks the controller in one
filtered request, and prints what the real program prints, byte for byte where clients parse it.
They are installed into a directory of their own (``xce compat path``), never on PATH by default,
so that they cannot shadow a real LSF or Slurm on the same machine.
"""
