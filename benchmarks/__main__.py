"""python -m benchmarks [--quick] ...: see benchmarks/run.py."""

from benchmarks.run import main

main()
