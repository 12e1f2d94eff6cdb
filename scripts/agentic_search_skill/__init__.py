"""agentic_search_skill: the codebase retriever behind scripts/retrieve_loop.py.

One module per stage of the loop, data flowing one way:
walk (DISPATCH) -> match -> score (EVALUATE) -> refine (REFINE) -> hints -> output.
The package name is deliberately distinctive so that putting scripts/ on sys.path
shadows nothing of a consumer's.
"""

__version__ = "0.1.0"
