"""The demos of the concept pages (positional encoding, softmax scaling, normalisation, residual connections,
attention step by step): small computations shown to a class, apart from the networks the lab trains and inspects."""
