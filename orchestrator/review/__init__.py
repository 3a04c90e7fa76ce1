"""`autoformalize review`: people review the book's statements and definitions; their verdicts are ground truth."""
