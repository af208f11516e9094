"""Host layer tests: the scripts over real SSH on a fake Ascend node, and the commands that run them."""
