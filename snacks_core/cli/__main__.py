"""``python -m snacks_core.cli``: the ``snacks`` command."""

from snacks_core.cli import command_line

command_line()
