"""Shell completion: the script Cyclopts generates from the whole command tree (commands, sub-commands,
options, choices), printed for the user to install, or installed where the shell looks for it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Literal

from cyclopts import Parameter

from cerebro.cli.output import emit

Shell = Literal["bash", "zsh", "fish"]


def completion(
    shell: Annotated[
        Shell | None, Parameter(help="bash, zsh or fish (default: the shell this runs in, else the one $SHELL names)")
    ] = None,
    *,
    install: Annotated[
        bool,
        Parameter(
            help="Write the script where the shell loads completions from instead of printing it (bash: "
            "~/.local/share/bash-completion/completions/cerebro, sourced from ~/.bashrc; zsh: "
            "~/.zsh/completions/_cyclopts_cerebro, that folder added to fpath in ~/.zshrc; fish: "
            "~/.config/fish/completions/cerebro.fish)"
        ),
    ] = False,
) -> None:
    """Shell completion for cerebro's commands, options and choices.

    Examples
      cerebro completion bash > ~/.local/share/bash-completion/completions/cerebro
      cerebro completion zsh
      cerebro completion --install
    """
    from cerebro.cli.app import build_app
    from cerebro.errors import InvalidInput

    if shell is None:
        from cyclopts.completion.detect import ShellDetectionError, detect_shell

        try:
            shell = detect_shell()  # type: ignore[assignment]
        except ShellDetectionError:
            named = os.environ.get("SHELL") or "nothing"
            raise InvalidInput(f"no completion for $SHELL ({named}): name bash, zsh or fish") from None
        if shell not in ("bash", "zsh", "fish"):
            raise InvalidInput(f"no completion for {shell}: bash, zsh or fish")
    app = build_app()
    installed: Path | None = None
    if install:
        installed = app.install_completion(shell=shell)
        script = None
    else:
        script = app.generate_completion(prog_name="cerebro", shell=shell)
    text = f"Installed the {shell} completion in {installed} (open a new shell to use it)" if installed else script
    emit({"shell": shell, "script": script, "installed": str(installed) if installed else None}, text or "")
