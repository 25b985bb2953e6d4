"""A Hugging Face config's parameter count, estimated before building (model/hf_config.py), against the models that
transformers builds from small configs of every architecture the models folder takes."""
import pytest

from model.hf_config import MAX_LAYERS, estimate_parameters

SMALL = {"vocab_size": 120, "max_position_embeddings": 40}
CONFIGS = {
    "bert": {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 64},
    "roberta": {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 64},
    "xlm-roberta": {"hidden_size": 32, "num_hidden_layers": 3, "num_attention_heads": 2, "intermediate_size": 48},
    "electra": {"hidden_size": 32, "embedding_size": 16, "num_hidden_layers": 2, "num_attention_heads": 4,
               "intermediate_size": 64},
    "albert": {"hidden_size": 32, "embedding_size": 16, "num_hidden_layers": 6, "num_attention_heads": 4,
                   "intermediate_size": 64},
    "distilbert": {"dim": 32, "n_layers": 2, "n_heads": 4, "hidden_dim": 64},
    "gpt2": {"n_embd": 32, "n_layer": 2, "n_head": 4, "n_positions": 40},
    "gpt_neo": {"hidden_size": 32, "num_layers": 2, "num_heads": 4, "attention_types": [[["global", "local"], 1]]},
    "opt": {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4, "ffn_dim": 64, "word_embed_proj_dim": 32},
    "bart": {"d_model": 32, "encoder_layers": 2, "decoder_layers": 1, "encoder_attention_heads": 4, "decoder_attention_heads": 2,
                 "encoder_ffn_dim": 64, "decoder_ffn_dim": 64},
    "mbart": {"d_model": 32, "encoder_layers": 2, "decoder_layers": 2, "encoder_attention_heads": 4,
                  "decoder_attention_heads": 4, "encoder_ffn_dim": 64, "decoder_ffn_dim": 64},
    "marian": {"d_model": 32, "encoder_layers": 2, "decoder_layers": 2, "encoder_attention_heads": 4,
                   "decoder_attention_heads": 4, "encoder_ffn_dim": 64, "decoder_ffn_dim": 64, "decoder_start_token_id": 0,
                   "pad_token_id": 0},
    "pegasus": {"d_model": 32, "encoder_layers": 2, "decoder_layers": 2, "encoder_attention_heads": 4,
               "decoder_attention_heads": 4, "encoder_ffn_dim": 64, "decoder_ffn_dim": 64},
    "t5": {"d_model": 32, "d_kv": 8, "d_ff": 64, "num_layers": 2, "num_decoder_layers": 1, "num_heads": 4},
}


@pytest.mark.parametrize("model_type", sorted(CONFIGS))
def test_the_estimate_is_within_a_tenth_of_the_built_model(model_type):
    import transformers

    settings = {**SMALL, **CONFIGS[model_type]}
    config = transformers.AutoConfig.for_model(model_type, **settings)
    loader = transformers.AutoModelForSeq2SeqLM if config.is_encoder_decoder else transformers.AutoModel
    model = loader.from_config(config)
    actual = sum(p.numel() for p in model.parameters())
    if hasattr(model, "pooler") and model.pooler is not None:  # a pooler is a task head, not counted
        actual -= sum(p.numel() for p in model.pooler.parameters())
    estimate = estimate_parameters({"model_type": model_type, **config.to_dict()})
    assert abs(estimate - actual) <= 0.1 * actual, (estimate, actual)


@pytest.mark.parametrize("field, value", [("num_hidden_layers", 10**9), ("num_hidden_layers", MAX_LAYERS + 1),
                                          ("num_attention_heads", 0), ("num_attention_heads", 5),
                                          ("hidden_size", -32), ("hidden_size", 32.0), ("hidden_size", True),
                                          ("vocab_size", "120"), ("intermediate_size", float("nan"))])
def test_a_shape_field_out_of_kind_or_bounds_is_named(field, value):
    config = {"model_type": "bert", **SMALL, **CONFIGS["bert"], field: value}
    with pytest.raises(ValueError, match=field):
        estimate_parameters(config)


def test_a_config_without_its_width_or_of_another_architecture_is_refused():
    with pytest.raises(ValueError, match="hidden_size"):
        estimate_parameters({"model_type": "bert", "num_hidden_layers": 2})
    with pytest.raises(ValueError, match="not supported"):
        estimate_parameters({"model_type": "mamba-9000"})
