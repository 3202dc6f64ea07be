"""What runs on a GPU node: the push agent, one standard-library file that people copy to a node
(in a folder of its own, so that running it from here finds no module of the app beside it)."""
