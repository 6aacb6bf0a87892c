"""`python -m tasks_conformance` and the `tasks-conformance` console script."""

from tasks_conformance import startup_gc


def main() -> None:
    startup_gc.pause()  # resumed when the run starts (runner.execute)
    from tasks_conformance.cli import main as cli_main

    cli_main()


if __name__ == "__main__":
    main()
