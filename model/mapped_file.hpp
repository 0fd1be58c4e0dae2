#pragma once
// A read-only memory mapping of a whole file; move-only.

#include <cstddef>
#include <filesystem>
#include <span>

#include "base/result.hpp"

namespace kvactor::model {

class mapped_file {
public:
  // Maps `path` read-only. An empty file maps to an empty span.
  static result<mapped_file> open(const std::filesystem::path& path);

  mapped_file() = default;
  mapped_file(mapped_file&& other) noexcept;
  mapped_file& operator=(mapped_file&& other) noexcept;
  mapped_file(const mapped_file&) = delete;
  mapped_file& operator=(const mapped_file&) = delete;
  ~mapped_file();

  std::span<const std::byte> bytes() const { return {data_, size_}; }
  std::size_t size() const { return size_; }
  // Lets the kernel drop the pages read so far (they are the file's: a
  // later read brings them back), so that data copied out of the mapping
  // is not resident twice.
  void drop_pages() const;

private:
  mapped_file(const std::byte* data, std::size_t size) : data_(data), size_(size) {}
  void reset();

  const std::byte* data_ = nullptr;
  std::size_t size_ = 0;
};

} // namespace kvactor::model
