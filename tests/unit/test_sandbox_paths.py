"""The sandbox's path comparisons (`edge.sandbox`): the string form a launch uses says what
pathlib says, for absolute and relative paths alike."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from armbench.edge.sandbox import _inside

_name = st.sampled_from(["a", "b", "ab", "a.b", "..", ".", "a-b"])
_path = st.builds(lambda root, names: root + "/".join(names), st.sampled_from(["/", "", "./"]),
                  st.lists(_name, max_size=4))


@given(_path, _path)
def test_inside_is_pathlibs_parents(path: str, folder: str) -> None:
    p, f = Path(path), Path(folder)
    assert _inside(str(p), str(f)) == (p == f or f in p.parents)
