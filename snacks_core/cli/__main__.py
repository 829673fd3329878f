"""``python -m snacks_core.cli``: the ``snacks`` command."""

from . import command_line

command_line()
