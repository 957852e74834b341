"""Study engines: approximation error, accuracy, timing, Table 1, variance, Gram views and their cost models.
Each returns tidy pandas DataFrames; the figures and the dashboard draw them."""
