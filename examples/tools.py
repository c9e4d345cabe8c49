"""Example tool set (Cline-like) used by the README's first command."""

from __future__ import annotations

from pydantic import BaseModel, Field


class ReadFile(BaseModel):
    """Read a file from the workspace."""

    path: str = Field(description="path of the file, relative to the workspace")


class WriteToFile(BaseModel):
    """Write a whole file."""

    path: str
    content: str


class ExecuteCommand(BaseModel):
    """Run a shell command."""

    command: str
    requires_approval: bool = False


TOOLS = {
    "read_file": ReadFile,
    "write_to_file": WriteToFile,
    "execute_command": ExecuteCommand,
}
