"""azero.train — see DESIGN.md.

network.py     PolicyValueNet (residual tower, policy logits + tanh value), masked_log_softmax
replay.py      ReplayBuffer: growing sliding window over atomic npz shards, symmetry augmentation
checkpoint.py  safetensors checkpoints (no pickle), latest_checkpoint, CheckpointError
trainer.py     TrainConfig, Trainer: train_step, train_from(buffer), exact save / load
atomic.py      temp + fsync + os.replace file writes shared by the two above
precision.py   precision (auto / f32 / bf16) and inference backend (auto / torch / openvino) resolution
openvino_backend.py  OpenVinoNet: the network compiled by OpenVINO, hot reload by constant swap, threads
"""
