"""`cave --plain`: a line-based front end on prompt_toolkit and Rich."""
