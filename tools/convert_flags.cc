#include "convert_flags.h"

namespace shard_tool {

namespace remote = libshard::remote;
using libshard::Status;

std::shared_ptr<ConvertFlags> AddConvertOptions(CLI::App& app) {
  auto flags = std::make_shared<ConvertFlags>();
  CLI::App* cmd = flags->command = app.add_subcommand(
      "convert",
      "Convert an image folder or CSV manifest to TFRecord shards, .idx indices, .labels sidecars, manifest.json "
      "and rejects.tsv. Images are read as PNG, JPEG, still WebP, TIFF (first page), GIF (first frame) or "
      "uncompressed BMP, by content; all but JPEG and PNG are always re-encoded to --format.\n"
      "Exit codes: 0 every input converted, 3 some inputs rejected (the rest converted; see "
      "rejects.tsv), 1 fatal error while converting (nothing half-written is left under a shard's "
      "name) or nothing converted (every input rejected), 2 usage error or an unreadable or invalid argument (a "
      "missing input, a bad CSV, a bad --prefix), before anything is written.");
  const std::vector<remote::ConvertFlag>& table = remote::ConvertFlagTable();
  flags->slots.resize(table.size());
  for (size_t i = 0; i < table.size(); ++i) {
    const remote::ConvertFlag& flag = table[i];
    ConvertFlags::Slot& slot = flags->slots[i];
    slot.flag = &flag;
    CLI::Option* o = nullptr;
    switch (flag.arity) {
      case remote::FlagArity::kSwitch:
        o = cmd->add_flag(flag.names, slot.on, flag.help);
        break;
      case remote::FlagArity::kRepeated:
        o = cmd->add_option(flag.names, slot.texts, flag.help);
        break;
      case remote::FlagArity::kValue:
      case remote::FlagArity::kPositional:
        o = cmd->add_option(flag.names, slot.text, flag.help)->type_name(flag.type);
        break;
    }
    if (flag.required) o->required();
    if (flag.check.kind != remote::FlagCheck::kNone) {
      const remote::FlagCheck check = flag.check;
      o->check(CLI::Validator([check](std::string& s) { return remote::CheckFlagText(check, s); },
                              remote::FlagCheckDescription(check)));
    }
    if (flag.default_text != nullptr) o->default_str(flag.default_text);
    if (flag.group != nullptr) o->group(flag.group);
    slot.option = o;
  }
  return flags;
}

Status BuildConvertOptions(ConvertFlags& flags) {
  for (const ConvertFlags::Slot& slot : flags.slots) {
    if (slot.option->count() == 0) continue;
    if (slot.flag->arity == remote::FlagArity::kRepeated) {
      for (const std::string& text : slot.texts) {
        LIBSHARD_RETURN_IF_ERROR(remote::SetConvertFlag(*slot.flag, text, &flags.values));
      }
    } else if (slot.flag->arity == remote::FlagArity::kSwitch) {
      LIBSHARD_RETURN_IF_ERROR(remote::SetConvertFlag(*slot.flag, slot.on ? "true" : "false", &flags.values));
    } else {
      LIBSHARD_RETURN_IF_ERROR(remote::SetConvertFlag(*slot.flag, slot.text, &flags.values));
    }
  }
  return remote::FinishConvertFlags(&flags.values);
}

}  // namespace shard_tool
