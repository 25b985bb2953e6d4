"""Pure PyTorch core of Attention Lab: attention, models, data, training, decoding, checkpoints."""
