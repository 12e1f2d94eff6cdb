"""Small trees for tests, written under tmp_path (never inside the repository)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Dict, List, Optional, Union

from agentic_search_skill.match import Document, read_document


def write_tree(root: Path, files: Dict[str, Union[str, bytes]], mtime: Optional[float] = None) -> Path:
    """Write ``files`` (POSIX relative path -> text or bytes) under ``root``."""
    root.mkdir(parents=True, exist_ok=True)
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
        if mtime is not None:
            os.utime(path, (mtime, mtime))
    return root


def read_tree(root: Path, files: Dict[str, str]) -> List[Document]:
    """Write ``files`` under ``root`` and read them back as the engine does, by path."""
    write_tree(Path(root), files)
    return [read_document(rel, os.path.join(str(root), *rel.split("/"))) for rel in sorted(files)]
