"""The recall probe (issue 19): questions from the world's ground truth, asked of each
agent about its own past, and the said-vs-did consistency check."""
