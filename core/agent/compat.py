"""Every framework symbol the agent's adapters patch or read, in one place.

The hook patches private internals (Keras' optimizer, tf.data's iterators, torch's DataLoader
iterator, the Lightning and Hugging Face trainers). A framework release that moves one would
leave a user's job untimed (the hook logs `hook-failed` and the program runs on), so the adapters
take their patch targets from here and tests/e2e/test_framework_compat.py imports each installed
framework and checks every symbol below: a release that removes one fails our CI first.

A symbol is ``"module:qualname"``: the module to import, then the attribute path within it.
Attributes a trainer sets on itself in ``__init__`` (not on its class) are listed apart, by class.
"""

from __future__ import annotations

import importlib
from typing import Any

# ---- Keras 3 (keras_probe: fit(); keras_loops: custom loops) ------------------------------------
KERAS_FIT = "keras:Model.fit"  # wrapped: the probe's callback joins every fit()
KERAS_EVALUATE = "keras:Model.evaluate"  # the bounded validation passes after a probe stop
KERAS_CALLBACK = "keras:callbacks.Callback"  # ProbeCallback's base
KERAS_HISTORY = "keras:callbacks.History"  # what a fit() the probe ended returns
KERAS_HISTORY_SET_MODEL = "keras:callbacks.History.set_model"
KERAS_OPTIMIZER_APPLY = "keras.src.optimizers.base_optimizer:BaseOptimizer.apply"  # a custom-loop step

KERAS = (KERAS_FIT, KERAS_EVALUATE, KERAS_CALLBACK, KERAS_HISTORY, KERAS_HISTORY_SET_MODEL,
         KERAS_OPTIMIZER_APPLY, "keras:__version__")

# ---- TensorFlow (keras_loops: tf.data epochs and the traced optimizer step) ---------------------
TF_DATASET_ITER = "tensorflow.python.data.ops.dataset_ops:DatasetV2.__iter__"  # a new epoch
TF_ITERATOR_NEXT = "tensorflow.python.data.ops.iterator_ops:OwnedIterator.__next__"  # stop point
TF_DATASET_CARDINALITY = "tensorflow.python.data.ops.dataset_ops:DatasetV2.cardinality"

TENSORFLOW = (TF_DATASET_ITER, TF_ITERATOR_NEXT, TF_DATASET_CARDINALITY,
              "tensorflow:executing_eagerly", "tensorflow:py_function")

# ---- PyTorch (torch_probe) ----------------------------------------------------------------------
TORCH_STEP_HOOK = "torch.optim.optimizer:register_optimizer_step_post_hook"  # a step
TORCH_LOADER_ITER = "torch.utils.data:DataLoader.__iter__"  # a pass: an epoch, or validation
TORCH_LOADER_NEXT = "torch.utils.data.dataloader:_BaseDataLoaderIter.__next__"  # batches, the stop
TORCH_OPTIMIZER_INIT = "torch.optim:Optimizer.__init__"  # counted: none made, backward steps
TORCH_BACKWARD = "torch.autograd:backward"  # Tensor.backward calls it: the step without optimizer

TORCH = (TORCH_STEP_HOOK, TORCH_LOADER_ITER, TORCH_LOADER_NEXT, TORCH_OPTIMIZER_INIT,
         TORCH_BACKWARD, "torch:__version__", "torch.cuda:is_initialized",
         "torch:device", "torch:tensor", "torch.cuda:synchronize", "torch.cuda:current_device",
         "torch.distributed:is_available", "torch.distributed:is_initialized",
         "torch.distributed:get_world_size", "torch.distributed:get_backend",
         "torch.distributed:get_rank", "torch.distributed:all_reduce",
         "torch.distributed:ReduceOp.MAX")

# ---- Lightning (torch_probe.watch_trainers: its Trainer, stopped through its own flag) -----------
LIGHTNING_TRAINER = "lightning.pytorch.trainer.trainer:Trainer.__init__"
PL_TRAINER = "pytorch_lightning.trainer.trainer:Trainer.__init__"  # the older package name
LIGHTNING = (LIGHTNING_TRAINER, "lightning.pytorch.trainer.trainer:Trainer.num_training_batches",
             "lightning.pytorch.trainer.trainer:Trainer.max_epochs")
PYTORCH_LIGHTNING = (PL_TRAINER, "pytorch_lightning.trainer.trainer:Trainer.num_training_batches",
                     "pytorch_lightning.trainer.trainer:Trainer.max_epochs")
# set on the instance by Trainer.__init__: N_it's accumulation, and the stop flag
LIGHTNING_INSTANCE = ("should_stop", "accumulate_grad_batches", "num_training_batches",
                      "max_epochs")

# ---- Hugging Face (torch_probe.watch_trainers: its Trainer; Accelerate is only named) -----------
HF_TRAINER = "transformers.trainer:Trainer.__init__"
TRANSFORMERS = (HF_TRAINER,
                "transformers.training_args:TrainingArguments.gradient_accumulation_steps",
                "transformers.training_args:TrainingArguments.num_train_epochs",
                "transformers.trainer_callback:TrainerControl.should_training_stop")
HF_TRAINER_INSTANCE = ("args", "control")  # set by Trainer.__init__
ACCELERATE = ("accelerate.accelerator:Accelerator",)  # in sys.modules: the framework label

# The trainers watch_trainers patches, each (module, class): from the symbols above.
TRAINERS = tuple((s.split(":")[0], s.split(":")[1].split(".")[0])
                 for s in (LIGHTNING_TRAINER, PL_TRAINER, HF_TRAINER))

# By distribution (what pip installs): every symbol the agent relies on in it.
BY_FRAMEWORK: dict[str, tuple[str, ...]] = {
    "keras": KERAS,
    "tensorflow": TENSORFLOW,
    "torch": TORCH,
    "lightning": LIGHTNING,
    "pytorch_lightning": PYTORCH_LIGHTNING,
    "transformers": TRANSFORMERS,
    "accelerate": ACCELERATE,
}


def resolve(symbol: str) -> Any:
    """The object a symbol names (imports its module); ImportError / AttributeError if gone."""
    module_name, _, qualname = symbol.partition(":")
    obj: Any = importlib.import_module(module_name)
    for part in filter(None, qualname.split(".")):
        obj = getattr(obj, part)
    return obj


def owner(symbol: str) -> tuple[Any, str]:
    """What to patch for a symbol: (the object holding the attribute, the attribute's name)."""
    module_name, _, qualname = symbol.partition(":")
    head, _, name = qualname.rpartition(".")
    if not head:  # a module's own function
        return importlib.import_module(module_name), name
    return resolve(f"{module_name}:{head}"), name
