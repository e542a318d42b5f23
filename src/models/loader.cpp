// Models from Hugging Face folders: config.json read into a Config, the architecture built, and the weights of
// model.safetensors or pytorch_model.bin (or the shards their index.json names) loaded into it by name.
#include <cstring>
#include <filesystem>
#include <map>
#include <set>

#include "base/json.h"
#include "models/models.h"
#include "state/file_io.h"
#include "tg/state.h"

namespace tg::llm {

namespace {

// The fields of a config.json object, each read once with its type checked.
class Fields {
 public:
  Fields(const base::Json& j, std::string path, Loc where) : j_(j), path_(std::move(path)), where_(where) {
    if (j.kind != base::Json::Kind::Object) throw error("is not a JSON object");
  }
  const base::Json* find(const std::string& key) const {
    for (const auto& [k, v] : j_.members)
      if (k == key && v.kind != base::Json::Kind::Null) return &v;
    return nullptr;
  }
  // a positive integer, or `fallback` where the field is absent (an error without one)
  int64_t integer(const char* key, std::optional<int64_t> fallback = std::nullopt) const {
    const base::Json* v = find(key);
    if (!v && !fallback) throw error("has no \"" + std::string(key) + "\"");
    if (!v) return *fallback;
    if (v->kind != base::Json::Kind::Int || v->integer < 1) throw error("\"" + std::string(key) + "\" must be a positive integer");
    return v->integer;
  }
  double number(const char* key, double fallback) const {
    const base::Json* v = find(key);
    if (!v) return fallback;
    if (v->kind != base::Json::Kind::Int && v->kind != base::Json::Kind::Float) throw error("\"" + std::string(key) + "\" must be a number");
    return v->number;
  }
  std::string string(const char* key, const std::string& fallback) const {
    const base::Json* v = find(key);
    if (!v) return fallback;
    if (v->kind != base::Json::Kind::String) throw error("\"" + std::string(key) + "\" must be a string");
    return v->str;
  }
  bool boolean(const char* key, bool fallback) const {
    const base::Json* v = find(key);
    if (!v) return fallback;
    if (v->kind != base::Json::Kind::Bool) throw error("\"" + std::string(key) + "\" must be true or false");
    return v->boolean;
  }
  ArgumentError error(const std::string& msg) const { return ArgumentError("read_config", path_ + ": " + msg, where_); }

 private:
  const base::Json& j_;
  std::string path_;
  Loc where_;
};

// Mixtral's expert names as Qwen-MoE's, the model's: block_sparse_moe.gate -> mlp.gate, and each expert's w1, w3,
// w2 -> gate_proj, up_proj, down_proj
std::string mixtral_to_qwen_names(const std::string& name) {
  size_t at = name.find(".block_sparse_moe.");
  if (at == std::string::npos) return name;
  std::string out = name.substr(0, at) + ".mlp." + name.substr(at + 18);
  for (auto [from, to] : {std::pair{".w1.weight", ".gate_proj.weight"}, {".w3.weight", ".up_proj.weight"}, {".w2.weight", ".down_proj.weight"}})
    if (out.size() > std::strlen(from) && out.compare(out.size() - std::strlen(from), std::string::npos, from) == 0)
      return out.substr(0, out.size() - std::strlen(from)) + to;
  return out;
}

}  // namespace

void assign_weights(Transformer& model, const StateDict& found, const std::string& source, Loc where) {
  // Each weight keeps its stored dtype (computed in float32), so the model's tensors are replaced, not assigned.
  std::vector<std::string> missing;
  model.state(nn::StateVisitor([&](const std::string& name, Tensor& t) {
    auto it = found.find(name);
    if (it == found.end()) return missing.push_back(name);
    const Tensor& w = it->second;
    if (w.shape() != t.shape())
      throw ShapeError("llm::load", source + ": " + name + " is " + shape_str(w.shape()) + ", the config makes it " + shape_str(t.shape()), where);
    if (!w.dtype().is_float())
      throw DTypeError("llm::load", source + ": " + name + " is " + w.dtype().name() + ", not a float dtype", where);
    t = w;
  }));
  if (!missing.empty()) {
    std::string list;
    for (size_t i = 0; i < missing.size() && i < 5; i++) list += (i ? ", " : "") + missing[i];
    throw ArgumentError("llm::load", source + ": " + std::to_string(missing.size()) + " weights missing: " + list +
                                         (missing.size() > 5 ? ", ..." : ""), where);
  }
}

std::vector<Tensor> model_weights(Transformer& model) {
  std::vector<Tensor> all;
  model.state(nn::StateVisitor([&](const std::string&, Tensor& t) { all.push_back(t); }));
  return all;
}

Config read_config(const std::string& path, Loc where) {
  base::Json json = state::parse_json_file(path, "read_config", where);
  Fields f(json, path, where);
  Config c;
  c.arch = f.string("model_type", "");
  if (c.arch == "gpt2") {
    c.vocab_size = f.integer("vocab_size"), c.dim = f.integer("n_embd"), c.n_layers = f.integer("n_layer");
    c.n_heads = c.n_kv_heads = f.integer("n_head"), c.max_context = f.integer("n_positions");
    c.hidden_dim = f.integer("n_inner", 4 * c.dim), c.norm_eps = f.number("layer_norm_epsilon", 1e-5);
    c.tie_embeddings = true;
    std::string act = f.string("activation_function", "gelu_new");
    if (act != "gelu_new" && act != "gelu_pytorch_tanh") throw f.error("activation_function \"" + act + "\" is not supported (gelu_new)");
  } else if (c.arch == "llama" || c.arch == "mistral" || c.arch == "mixtral" || c.arch == "qwen2" || c.arch == "qwen3" ||
             c.arch == "qwen3_moe" || c.arch == "olmoe") {
    const std::string type = c.arch;
    c.arch = "llama";
    c.attention_bias = type == "qwen2";  // always, without a field saying so
    c.qk_norm = type == "qwen3" || type == "qwen3_moe" || type == "olmoe", c.qk_norm_whole = type == "olmoe";
    if (type == "qwen3_moe" || type == "olmoe") {
      c.n_experts = f.integer("num_experts"), c.n_experts_used = f.integer("num_experts_per_tok");
      c.expert_hidden_dim = f.integer(type == "olmoe" ? "intermediate_size" : "moe_intermediate_size");
      c.experts_renormalize = f.boolean("norm_topk_prob", false);
      if (c.n_experts_used > c.n_experts) throw f.error("num_experts_per_tok is larger than num_experts");
      if (f.integer("decoder_sparse_step", 1) != 1) throw f.error("decoder_sparse_step other than 1 is not supported");
      if (const base::Json* dense = f.find("mlp_only_layers"); dense && !dense->items.empty())
        throw f.error("mlp_only_layers is not supported");
    }
    if (type == "mixtral") {  // its experts are intermediate_size wide; the top k's softmax is renormalized
      c.n_experts = f.integer("num_local_experts"), c.n_experts_used = f.integer("num_experts_per_tok");
      c.expert_hidden_dim = f.integer("intermediate_size"), c.experts_renormalize = true;
      if (c.n_experts_used > c.n_experts) throw f.error("num_experts_per_tok is larger than num_local_experts");
    }
    c.vocab_size = f.integer("vocab_size"), c.dim = f.integer("hidden_size");
    c.n_layers = f.integer("num_hidden_layers"), c.n_heads = f.integer("num_attention_heads");
    c.n_kv_heads = f.integer("num_key_value_heads", c.n_heads), c.hidden_dim = f.integer("intermediate_size");
    c.max_context = f.integer("max_position_embeddings"), c.norm_eps = f.number("rms_norm_eps", 1e-6);
    c.rope_theta = f.number("rope_theta", 10000), c.tie_embeddings = f.boolean("tie_word_embeddings", false);
    if (f.find("head_dim")) c.head_dim = f.integer("head_dim");
    std::string act = f.string("hidden_act", "silu");
    if (act != "silu") throw f.error("hidden_act \"" + act + "\" is not supported (silu)");
    c.attention_bias = f.boolean("attention_bias", c.attention_bias);
    if (f.boolean("mlp_bias", false)) throw f.error("mlp_bias is not supported");
    if (const base::Json* scaling = f.find("rope_scaling")) {
      Fields s(*scaling, path + " rope_scaling", where);
      std::string type = s.string("rope_type", s.string("type", ""));
      if (type != "llama3") throw f.error("rope_scaling type \"" + type + "\" is not supported (llama3)");
      c.rope_factor = s.number("factor", 8), c.rope_low_freq_factor = s.number("low_freq_factor", 1);
      c.rope_high_freq_factor = s.number("high_freq_factor", 4);
      c.rope_original_context = s.integer("original_max_position_embeddings", 8192);
      if (c.rope_factor <= 0 || c.rope_high_freq_factor <= c.rope_low_freq_factor)
        throw f.error("rope_scaling needs factor > 0 and high_freq_factor > low_freq_factor");
    }
  } else {
    throw f.error("model_type \"" + c.arch + "\" is not supported (gpt2, llama, mistral, mixtral, qwen2, qwen3, qwen3_moe, olmoe)");
  }
  if (const base::Json* eos = f.find("eos_token_id")) {
    for (const base::Json& id : eos->kind == base::Json::Kind::Array ? eos->items : std::vector<base::Json>{*eos}) {
      if (id.kind != base::Json::Kind::Int || id.integer < 0 || id.integer >= c.vocab_size)
        throw f.error("eos_token_id must be token ids below the vocabulary size");
      c.eos_token_ids.push_back(static_cast<int32_t>(id.integer));
    }
  }
  if (c.head_dim == 0) {
    if (c.dim % c.n_heads) throw f.error("hidden size " + std::to_string(c.dim) + " is not a multiple of the " + std::to_string(c.n_heads) + " heads");
    c.head_dim = c.dim / c.n_heads;
  }
  if (c.n_heads % c.n_kv_heads) throw f.error(std::to_string(c.n_heads) + " attention heads are not a multiple of the " + std::to_string(c.n_kv_heads) + " key/value heads");
  if (c.head_dim % 2) throw f.error("head_dim " + std::to_string(c.head_dim) + " must be even (rotary embeddings)");
  return c;
}

std::unique_ptr<Transformer> new_model(const Config& config, const std::string& device, Init init, Loc where) {
  if (config.arch == "gpt2") return make_gpt2(config, device, init);
  if (config.arch == "llama") return make_llama(config, device, init);
  throw ArgumentError("make_model", "unknown architecture \"" + config.arch + "\" (gpt2, llama)", where);
}

std::unique_ptr<Transformer> make_model(const Config& config, const std::string& device, Loc where) {
  return new_model(config, device, Init::Random, where);
}

std::unique_ptr<Transformer> load(const std::string& folder, const std::string& device, Loc where) {
  namespace fs = std::filesystem;
  const fs::path dir(folder);
  if (fs::is_regular_file(dir) && dir.extension() == ".gguf") return from_gguf(gguf_load(folder, device, where), folder, where);
  if (!fs::is_directory(dir)) throw ArgumentError("llm::load", folder + ": not a folder (a Hugging Face model folder with config.json) or a .gguf file", where);
  std::unique_ptr<Transformer> model = new_model(read_config((dir / "config.json").string(), where), device, Init::Empty, where);
  // the files holding the weights: one, or the shards an index names; safetensors first, then torch.save's
  std::vector<std::string> files;
  bool torch_files = false;
  for (const char* stem : {"model.safetensors", "pytorch_model.bin"}) {
    std::string index = (dir / (std::string(stem) + ".index.json")).string();
    if (fs::exists(dir / stem)) {
      files.push_back((dir / stem).string());
    } else if (fs::exists(index)) {
      base::Json j = state::parse_json_file(index, "llm::load", where);
      std::set<std::string> shards;
      for (const auto& [key, value] : j.members)
        if (key == "weight_map" && value.kind == base::Json::Kind::Object)
          for (const auto& [name, file] : value.members) {
            if (file.kind != base::Json::Kind::String || file.str.find('/') != std::string::npos || file.str.empty())
              throw ArgumentError("llm::load", index + ": weight_map[\"" + name + "\"] must be a file name in the folder", where);
            shards.insert(file.str);
          }
      if (shards.empty()) throw ArgumentError("llm::load", index + ": no weight_map", where);
      for (const std::string& shard : shards) files.push_back((dir / shard).string());
    }
    if (!files.empty()) {
      torch_files = std::string(stem) == "pytorch_model.bin";
      break;
    }
  }
  if (files.empty())
    throw ArgumentError("llm::load", folder + ": no model.safetensors, pytorch_model.bin or an index of their shards", where);
  StateDict wanted = get_state_dict(*model), found;  // by the model's names
  std::map<std::string, std::map<int64_t, Tensor>> experts;  // "...mlp.experts.gate_proj.weight" -> expert j's
  for (const std::string& file : files)
    for (auto& [stored_name, t] : torch_files ? torch_load(file, device, where) : safe_load(file, device, where)) {
      const std::string name = mixtral_to_qwen_names(stored_name);
      // GPT-2 checkpoints saved from GPT2Model lack the "transformer." prefix; anything unused is left alone
      std::string key = wanted.count(name) ? name : "transformer." + name;
      if (wanted.count(key)) found[key] = t;
      // "model.layers.0.mlp.experts.7.up_proj.weight": one expert of a stacked weight
      if (size_t at = name.find(".mlp.experts."); at != std::string::npos) {
        size_t num = at + 13, dot = name.find('.', num);
        std::string stacked = name.substr(0, num) + (dot == std::string::npos ? "" : name.substr(dot + 1));
        if (dot != std::string::npos && dot > num && wanted.count(stacked) && name.find_first_not_of("0123456789", num) == dot)
          experts[stacked][std::stoll(name.substr(num, dot - num))] = t;
      }
    }
  for (auto& [stacked, parts] : experts) {
    const int64_t want = wanted.at(stacked).shape()[0];
    if (static_cast<int64_t>(parts.size()) != want || parts.rbegin()->first != want - 1)
      throw ArgumentError("llm::load", folder + ": " + stacked + " needs experts 0 to " + std::to_string(want - 1) + ", found " +
                                           std::to_string(parts.size()), where);
    std::vector<Tensor> all;
    for (auto& [j, t] : parts) all.push_back(t);
    found[stacked] = Tensor::stack(all);
  }
  assign_weights(*model, found, folder, where);
  load_now(model_weights(*model));  // what must be copied from the mapped files, now rather than at the first token
  return model;
}

}  // namespace tg::llm
