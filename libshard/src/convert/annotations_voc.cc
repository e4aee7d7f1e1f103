// Pascal VOC XML files (annotations.h), read with expat: annotation/size
// and every annotation/object's name, bndbox, difficult and truncated;
// everything else is ignored. Hostile XML is stopped, not parsed to the end:
// nesting past kMaxDepth (the elements' path is kept and joined per element,
// so deep files would cost time quadratic in their depth) and any DOCTYPE
// (real VOC files have none; an internal subset's entities would expand to
// many times the file's size).
#include <expat.h>

#include <algorithm>
#include <map>
#include <set>

#include "convert/annotations_internal.h"
#include "libshard/text_escape.h"

namespace libshard::convert::internal {
namespace {

constexpr int kMaxDepth = 64;

struct VocObject {
  std::map<std::string, std::string> fields;  // "name", "bndbox/xmin", "difficult"...
};

struct VocFile {
  XML_Parser parser = nullptr;
  std::map<std::string, std::string> size;  // "width", "height"
  std::vector<VocObject> objects;
  std::vector<std::string> path;  // element names from the root
  std::string text;
  std::string error;  // why the parser was stopped
};

void Stop(VocFile* f, const std::string& why) {
  if (f->error.empty()) f->error = why;
  XML_StopParser(f->parser, XML_FALSE);
}

void XMLCALL Start(void* data, const XML_Char* name, const XML_Char**) {
  auto* f = static_cast<VocFile*>(data);
  if (f->path.size() >= kMaxDepth) {
    Stop(f, "elements nested deeper than " + std::to_string(kMaxDepth) + " (the limit): stopped at byte " +
                std::to_string(XML_GetCurrentByteIndex(f->parser)));
    return;
  }
  f->path.push_back(name);
  f->text.clear();
  if (f->path.size() == 2 && f->path[1] == "object") f->objects.emplace_back();
}

void XMLCALL End(void* data, const XML_Char*) {
  auto* f = static_cast<VocFile*>(data);
  const std::vector<std::string>& p = f->path;
  if (p.size() == 3 && p[1] == "size") f->size[p[2]] = f->text;
  if (p.size() >= 3 && p[1] == "object" && !f->objects.empty()) {
    std::string key = p[2];
    for (size_t i = 3; i < p.size(); ++i) key += "/" + p[i];
    if (key.size() < 64 && f->objects.back().fields.size() < 64) f->objects.back().fields[key] = f->text;
  }
  f->path.pop_back();
  f->text.clear();
}

void XMLCALL Text(void* data, const XML_Char* s, int len) {
  auto* f = static_cast<VocFile*>(data);
  if (f->text.size() < 4096) f->text.append(s, static_cast<size_t>(len));
}

void XMLCALL Doctype(void* data, const XML_Char*, const XML_Char*, const XML_Char*, int) {
  Stop(static_cast<VocFile*>(data), "declares a DOCTYPE (VOC XML has no DTD; entities are not expanded)");
}

void XMLCALL Entity(void* data, const XML_Char*, int, const XML_Char*, int, const XML_Char*, const XML_Char*,
                    const XML_Char*, const XML_Char*) {
  Stop(static_cast<VocFile*>(data), "declares an entity (VOC XML has no DTD; entities are not expanded)");
}

// The XML's elements, or why it does not parse.
std::string ParseXml(const std::string& text, VocFile* f) {
  XML_Parser p = XML_ParserCreate(nullptr);
  if (p == nullptr) return "out of memory";
  f->parser = p;
  XML_SetUserData(p, f);
  XML_SetElementHandler(p, Start, End);
  XML_SetCharacterDataHandler(p, Text);
  XML_SetStartDoctypeDeclHandler(p, Doctype);
  XML_SetEntityDeclHandler(p, Entity);
  std::string error;
  if (XML_Parse(p, text.data(), static_cast<int>(text.size()), 1) == XML_STATUS_ERROR && f->error.empty()) {
    error = std::string("not XML: ") + XML_ErrorString(XML_GetErrorCode(p)) + " at line " +
            std::to_string(XML_GetCurrentLineNumber(p));
  }
  XML_ParserFree(p);
  f->parser = nullptr;
  if (error.empty()) error = f->error;
  if (error.empty() && (f->path.size() != 0)) error = "unclosed elements";
  return error;
}

// The stem of a path: without its extension.
std::string Stem(const std::string& rel) {
  std::string stem = rel;
  const size_t dot = stem.rfind('.');
  if (dot != std::string::npos && stem.find('/', dot) == std::string::npos) stem.erase(dot);
  return stem;
}

// The XML of a sample: Annotations/SPLIT/REL/STEM.xml (its path from the
// root), else Annotations/REL/STEM.xml (its path in its split folder), else
// Annotations/STEM.xml; the first that exists as anything (a directory or a
// dangling link is a reject, not a miss); "" when none does.
std::vector<std::string> XmlTries(const std::string& dir, const Listing& listing, const SourceSample& s) {
  const std::string stem = Stem(s.path), in_split = Stem(PathInSplit(listing, s));
  const size_t slash = stem.rfind('/');
  const std::string flat = slash == std::string::npos ? stem : stem.substr(slash + 1);
  std::vector<std::string> tries = {dir + "/" + stem + ".xml"};
  if (in_split != stem) tries.push_back(dir + "/" + in_split + ".xml");
  if (flat != in_split) tries.push_back(dir + "/" + flat + ".xml");
  return tries;
}

std::string XmlPathOf(const std::string& dir, const Listing& listing, const SourceSample& s) {
  for (const std::string& xml : XmlTries(dir, listing, s)) {
    if (AnnotationFiles::Exists(xml)) return xml;
  }
  return "";
}

// "a.png, b.png and 3 more": the images an XML would serve.
std::string ImageList(const Listing& listing, const std::vector<size_t>& samples) {
  std::string out;
  const size_t show = std::min<size_t>(samples.size(), 3);
  for (size_t k = 0; k < show; ++k) {
    out += (k == 0 ? "" : k + 1 == samples.size() ? " and " : ", ") + listing.samples[samples[k]].path;
  }
  if (show < samples.size()) out += " and " + std::to_string(samples.size() - show) + " more";
  return out;
}

}  // namespace

Status ReadVoc(const AnnotationOptions& o, const Listing& listing, ParsedAnnotations* out) {
  // Each sample's file; one that two samples would share (a flat
  // Annotations/ of split folders whose stems repeat) is refused for all of
  // them, as COCO refuses a file_name that matches files of two splits.
  std::map<std::string, std::vector<size_t>> users;
  if (!listing.samples.empty()) {
    const std::vector<std::string> tries = XmlTries(o.source, listing, listing.samples[0]);
    out->lookup_example = "the XML of " + listing.samples[0].path + " would be " + tries[0];
    for (size_t k = 1; k < tries.size(); ++k) {
      out->lookup_example += (k + 1 == tries.size() ? " or " : ", ") + tries[k];
    }
  }
  for (size_t i = 0; i < listing.samples.size(); ++i) {
    const std::string xml = XmlPathOf(o.source, listing, listing.samples[i]);
    if (!xml.empty()) users[xml].push_back(i);
  }
  // Pass 1: every sample's file, parsed; pass 2 (once the class list is
  // known): its objects.
  std::map<size_t, std::pair<std::string, VocFile>> files;
  std::set<std::string> seen;
  AnnotationFiles reader(kMaxLabelFileBytes);
  for (const auto& [xml, samples] : users) {
    if (samples.size() > 1) {
      for (size_t i : samples) {
        out->bad[i] = xml + ": the annotation of " + std::to_string(samples.size()) + " images (" +
                      ImageList(listing, samples) +
                      "), refused for each; give each its own file, Annotations/SPLIT/REL/STEM.xml";
      }
      continue;
    }
    const size_t i = samples[0];
    const AnnotationFile file = reader.Read(xml, o.source);
    if (!file.why.empty() || !file.exists) {
      out->bad[i] = file.exists ? file.why : xml + ": vanished";
      continue;
    }
    VocFile f;
    if (std::string why = ParseXml(file.text, &f); !why.empty()) {
      out->bad[i] = xml + ": " + why;
      continue;
    }
    for (const VocObject& obj : f.objects) {
      if (auto n = obj.fields.find("name"); n != obj.fields.end()) seen.insert(TrimSpace(n->second));
    }
    files[i] = {xml, std::move(f)};
  }
  std::vector<std::string> names;
  if (!o.class_names_file.empty()) {
    LIBSHARD_ASSIGN_OR_RETURN(names, ReadClassList(o.class_names_file));
  } else {
    seen.erase("");
    names.assign(seen.begin(), seen.end());
  }
  out->classes = NumberedClasses(names);
  std::map<std::string, int64_t> label_of;
  for (const ObjectClass& c : out->classes) label_of[c.name] = c.label;

  for (auto& [i, entry] : files) {
    const std::string& xml = entry.first;
    const VocFile& f = entry.second;
    auto objects = std::make_shared<SampleObjects>();
    objects->origin = xml;
    double w = 0, h = 0;
    if (f.size.count("width") && f.size.count("height")) {
      if (!ParseFiniteNumber(f.size.at("width"), &w) || !ParseFiniteNumber(f.size.at("height"), &h) || w < 1 || h < 1 ||
          w > 1e6 || h > 1e6) {
        out->bad[i] = xml + ": size is not a width and height in pixels";
        continue;
      }
      objects->width = static_cast<int>(w);
      objects->height = static_cast<int>(h);
    }
    std::string why;
    for (size_t k = 0; k < f.objects.size() && why.empty(); ++k) {
      const std::string where = xml + " object " + std::to_string(k + 1);
      if (objects->objects.size() >= kMaxObjectsPerImage) why = where + ": more than 100000 objects";
      const auto& fields = f.objects[k].fields;
      auto get = [&](const char* key) {
        auto it = fields.find(key);
        return it == fields.end() ? std::string() : it->second;
      };
      const std::string name = TrimSpace(get("name"));
      auto label = label_of.find(name);
      if (label == label_of.end()) {
        why = where + ": unknown class '" + EscapeText(name) + "'";
        break;
      }
      double c[4];
      const char* keys[4] = {"bndbox/xmin", "bndbox/ymin", "bndbox/xmax", "bndbox/ymax"};
      for (int j = 0; j < 4 && why.empty(); ++j) {
        if (!ParseFiniteNumber(get(keys[j]), &c[j])) why = where + ": " + keys[j] + " is not a number";
      }
      if (!why.empty()) break;
      ObjectBox b;
      // VOC numbers pixels from 1, corners inclusive: pixel edges are
      // [xmin - 1, xmax] (as detectron2 reads them).
      b.xmin = c[0] - 1;
      b.ymin = c[1] - 1;
      b.xmax = c[2];
      b.ymax = c[3];
      b.label = label->second;
      b.difficult = TrimSpace(get("difficult")) == "1";
      b.truncated = TrimSpace(get("truncated")) == "1";
      if (std::string bad = CheckAndClamp(&b, w, h, 1.0); !bad.empty()) {
        why = where + ": " + bad;
        break;
      }
      objects->objects.push_back(b);
    }
    if (!why.empty()) {
      out->bad[i] = why;
      continue;
    }
    out->objects[i] = std::move(objects);
  }
  return Status::OK();
}

}  // namespace libshard::convert::internal
