"""azero.train — see DESIGN.md.

network.py     PolicyValueNet (residual tower, policy logits + tanh value), masked_log_softmax
replay.py      ReplayBuffer: growing sliding window over atomic npz shards, symmetry augmentation
checkpoint.py  safetensors checkpoints (no pickle), latest_checkpoint, CheckpointError
trainer.py     TrainConfig, Trainer: train_step, train_from(buffer), exact save / load
atomic.py      temp + fsync + os.replace file writes shared by the two above
"""
