"""Test set-up: put scripts/ on sys.path the way consuming skills do; the tree indexes
of every run (in-process or a subprocess) go to a temporary directory, never the user's."""
import atexit
import os
import shutil
import sys
import tempfile

SCRIPTS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scripts")
if SCRIPTS not in sys.path:
    sys.path.insert(0, SCRIPTS)

INDEX_DIR = tempfile.mkdtemp(prefix="agentic-search-test-index-")
os.environ["AGENTIC_SEARCH_INDEX_DIR"] = INDEX_DIR
atexit.register(shutil.rmtree, INDEX_DIR, True)
