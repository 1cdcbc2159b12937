/**
 * Real-world ffmpeg commands the policy must accept. Inputs use these exact URLs so the
 * end-to-end suite can substitute its own fixtures by string replacement; every command is
 * quick on a 2-second 320x240 clip with audio. `outputs` are the output names as the command
 * writes them (patterns such as `thumb_%03d.jpg` included), in command order.
 */
export const VIDEO = "https://example.com/video.mp4";
export const VIDEO2 = "https://example.com/video2.mp4";
export const AUDIO = "https://example.com/audio.wav";
export const IMAGE = "https://example.com/logo.png";
export const SUBTITLES = "https://example.com/subs.srt";

export interface CorpusCommand {
  name: string;
  command: string;
  outputs: string[];
}

export const REAL_WORLD_COMMANDS: CorpusCommand[] = [
  // transcoding
  {
    name: "H.264 with AAC and faststart",
    command: `ffmpeg -y -i ${VIDEO} -c:v libx264 -preset veryfast -crf 23 -pix_fmt yuv420p -c:a aac -b:a 128k -movflags +faststart h264.mp4`,
    outputs: ["h264.mp4"],
  },
  {
    name: "H.265 tagged for Apple players",
    command: `ffmpeg -i ${VIDEO} -c:v libx265 -preset ultrafast -crf 28 -x265-params log-level=error -tag:v hvc1 -c:a aac -b:a 96k h265.mp4`,
    outputs: ["h265.mp4"],
  },
  {
    name: "VP9 and Opus in WebM",
    command: `ffmpeg -i ${VIDEO} -c:v libvpx-vp9 -deadline realtime -cpu-used 8 -row-mt 1 -b:v 0 -crf 35 -c:a libopus -b:a 64k vp9.webm`,
    outputs: ["vp9.webm"],
  },
  {
    name: "AV1 with libaom at its fastest",
    command: `ffmpeg -i ${VIDEO} -c:v libaom-av1 -usage realtime -cpu-used 8 -crf 40 -b:v 0 -an av1.mkv`,
    outputs: ["av1.mkv"],
  },
  {
    name: "AV1 with SVT-AV1",
    command: `ffmpeg -i ${VIDEO} -c:v libsvtav1 -preset 12 -crf 40 -c:a libopus -b:a 64k svtav1.mp4`,
    outputs: ["svtav1.mp4"],
  },
  {
    name: "H.264 with x264 parameters and a fixed GOP",
    command: `ffmpeg -hide_banner -i ${VIDEO} -c:v libx264 -preset superfast -profile:v high -level 4.0 -g 50 -keyint_min 50 -x264-params scenecut=0:bframes=2 -maxrate 1M -bufsize 2M -c:a copy gop.mp4`,
    outputs: ["gop.mp4"],
  },
  // streaming packages
  {
    name: "HLS with fixed segment names",
    command: `ffmpeg -i ${VIDEO} -c:v libx264 -preset veryfast -c:a aac -f hls -hls_time 2 -hls_playlist_type vod -hls_segment_filename seg_%03d.ts index.m3u8`,
    outputs: ["index.m3u8"],
  },
  {
    name: "HLS ladder of two renditions with separate playlists",
    command:
      `ffmpeg -i ${VIDEO} ` +
      `-map 0:v -map 0:a -c:v libx264 -preset veryfast -s 320x240 -b:v 600k -c:a aac -b:a 96k -f hls -hls_time 1 -hls_playlist_type vod -hls_segment_filename high_%03d.ts high.m3u8 ` +
      `-map 0:v -map 0:a -c:v libx264 -preset veryfast -s 160x120 -b:v 200k -c:a aac -b:a 64k -f hls -hls_time 1 -hls_playlist_type vod -hls_segment_filename low_%03d.ts low.m3u8`,
    outputs: ["high.m3u8", "low.m3u8"],
  },
  {
    name: "HLS variants with a master playlist",
    command:
      `ffmpeg -i ${VIDEO} -filter_complex "[0:v]split=2[full][half];[half]scale=160:-2[small]" ` +
      `-map "[full]" -map 0:a -map "[small]" -map 0:a -c:v libx264 -preset veryfast -c:a aac -f hls -hls_time 1 ` +
      `-var_stream_map "v:0,a:0 v:1,a:1" -master_pl_name master.m3u8 -hls_segment_filename stream_%v_%03d.ts stream_%v.m3u8`,
    outputs: ["stream_%v.m3u8"],
  },
  {
    name: "HLS with fragmented MP4 segments",
    command: `ffmpeg -i ${VIDEO} -c:v libx264 -preset veryfast -c:a aac -f hls -hls_time 1 -hls_segment_type fmp4 -hls_fmp4_init_filename init.mp4 -hls_segment_filename chunk_%03d.m4s playlist.m3u8`,
    outputs: ["playlist.m3u8"],
  },
  {
    name: "MPEG-TS segments with a segment list",
    command: `ffmpeg -i ${VIDEO} -c:v libx264 -preset veryfast -g 25 -c:a aac -f segment -segment_time 1 -reset_timestamps 1 -segment_list parts.m3u8 part_%03d.ts`,
    outputs: ["part_%03d.ts"],
  },
  // images
  {
    name: "one thumbnail per second",
    command: `ffmpeg -i ${VIDEO} -vf fps=1 thumb_%03d.jpg`,
    outputs: ["thumb_%03d.jpg"],
  },
  {
    name: "poster frame at one second",
    command: `ffmpeg -ss 1 -i ${VIDEO} -frames:v 1 -q:v 2 poster.jpg`,
    outputs: ["poster.jpg"],
  },
  {
    name: "contact sheet of 3x3 tiles",
    command: `ffmpeg -i ${VIDEO} -vf "fps=5,scale=160:-1,tile=3x3" -frames:v 1 contact.png`,
    outputs: ["contact.png"],
  },
  {
    name: "most representative frame",
    command: `ffmpeg -i ${VIDEO} -vf thumbnail=25,scale=320:-1 -frames:v 1 -update 1 best.png`,
    outputs: ["best.png"],
  },
  {
    name: "keyframes only",
    command: `ffmpeg -i ${VIDEO} -vf "select='eq(pict_type,I)'" -fps_mode vfr keyframe_%02d.png`,
    outputs: ["keyframe_%02d.png"],
  },
  {
    name: "GIF with palettegen and paletteuse",
    command: `ffmpeg -i ${VIDEO} -filter_complex "[0:v]fps=10,scale=160:-1:flags=lanczos,split[a][b];[a]palettegen[p];[b][p]paletteuse=dither=bayer" -loop 0 anim.gif`,
    outputs: ["anim.gif"],
  },
  {
    name: "animated WebP",
    command: `ffmpeg -i ${VIDEO} -vf fps=10,scale=160:-1 -c:v libwebp -lossless 0 -q:v 70 -loop 0 -an anim.webp`,
    outputs: ["anim.webp"],
  },
  {
    name: "waveform picture of an audio file",
    command: `ffmpeg -i ${AUDIO} -filter_complex "showwavespic=s=640x120:colors=0x3366ff" -frames:v 1 waveform.png`,
    outputs: ["waveform.png"],
  },
  // audio
  {
    name: "extract audio to MP3",
    command: `ffmpeg -i ${VIDEO} -vn -c:a libmp3lame -q:a 2 audio.mp3`,
    outputs: ["audio.mp3"],
  },
  {
    name: "loudness normalisation",
    command: `ffmpeg -i ${AUDIO} -af loudnorm=I=-16:TP=-1.5:LRA=11 -ar 48000 -c:a aac -b:a 128k normalized.m4a`,
    outputs: ["normalized.m4a"],
  },
  {
    name: "mono speech WAV for transcription",
    command: `ffmpeg -i ${VIDEO} -vn -ac 1 -ar 16000 -c:a pcm_s16le speech.wav`,
    outputs: ["speech.wav"],
  },
  {
    name: "FLAC at maximum compression",
    command: `ffmpeg -i ${AUDIO} -c:a flac -compression_level 8 audio.flac`,
    outputs: ["audio.flac"],
  },
  {
    name: "mix music under the video's sound",
    command: `ffmpeg -i ${VIDEO} -i ${AUDIO} -filter_complex "[1:a]volume=0.3[bg];[0:a][bg]amix=inputs=2:duration=first[a]" -map 0:v -map "[a]" -c:v copy -c:a aac mixed.mp4`,
    outputs: ["mixed.mp4"],
  },
  // editing
  {
    name: "watermark overlay from a second input",
    command: `ffmpeg -i ${VIDEO} -i ${IMAGE} -filter_complex "[0:v][1:v]overlay=W-w-10:H-h-10" -c:v libx264 -preset veryfast -c:a copy watermarked.mp4`,
    outputs: ["watermarked.mp4"],
  },
  {
    name: "concat filter of three inputs",
    command: `ffmpeg -i ${VIDEO} -i ${VIDEO2} -i ${VIDEO} -filter_complex "[0:v][0:a][1:v][1:a][2:v][2:a]concat=n=3:v=1:a=1[v][a]" -map "[v]" -map "[a]" -c:v libx264 -preset veryfast -c:a aac joined.mp4`,
    outputs: ["joined.mp4"],
  },
  {
    name: "cut a clip by seeking",
    command: `ffmpeg -ss 0.5 -i ${VIDEO} -t 1 -c:v libx264 -preset veryfast -c:a aac clip.mp4`,
    outputs: ["clip.mp4"],
  },
  {
    name: "trim with filters",
    command: `ffmpeg -i ${VIDEO} -vf trim=start=0.5:end=1.5,setpts=PTS-STARTPTS -af atrim=start=0.5:end=1.5,asetpts=PTS-STARTPTS trimmed.mp4`,
    outputs: ["trimmed.mp4"],
  },
  {
    name: "double speed",
    command: `ffmpeg -i ${VIDEO} -filter_complex "[0:v]setpts=0.5*PTS[v];[0:a]atempo=2.0[a]" -map "[v]" -map "[a]" fast.mp4`,
    outputs: ["fast.mp4"],
  },
  {
    name: "crop the centre",
    command: `ffmpeg -i ${VIDEO} -vf crop=160:120:80:60 -c:a copy cropped.mp4`,
    outputs: ["cropped.mp4"],
  },
  {
    name: "rotate a quarter turn",
    command: `ffmpeg -i ${VIDEO} -vf transpose=1 -c:a copy rotated.mp4`,
    outputs: ["rotated.mp4"],
  },
  {
    name: "fade in and out",
    command: `ffmpeg -i ${VIDEO} -vf "fade=t=in:st=0:d=0.5,fade=t=out:st=1.5:d=0.5" -af "afade=t=in:st=0:d=0.5,afade=t=out:st=1.5:d=0.5" faded.mp4`,
    outputs: ["faded.mp4"],
  },
  {
    name: "letterbox to 16:9",
    command: `ffmpeg -i ${VIDEO} -vf "scale=640:360:force_original_aspect_ratio=decrease,pad=640:360:(ow-iw)/2:(oh-ih)/2,setsar=1" -c:a copy letterbox.mp4`,
    outputs: ["letterbox.mp4"],
  },
  {
    name: "side by side",
    command: `ffmpeg -i ${VIDEO} -i ${VIDEO2} -filter_complex "[0:v][1:v]hstack=inputs=2[v]" -map "[v]" -map 0:a -c:a copy sidebyside.mp4`,
    outputs: ["sidebyside.mp4"],
  },
  {
    name: "title text",
    command: `ffmpeg -i ${VIDEO} -vf "drawtext=text='ffedge demo':x=10:y=10:fontsize=20:fontcolor=white:box=1:boxcolor=black@0.5" -c:a copy titled.mp4`,
    outputs: ["titled.mp4"],
  },
  {
    name: "still image with an audio track",
    command: `ffmpeg -loop 1 -i ${IMAGE} -i ${AUDIO} -vf scale=320:240,format=yuv420p -c:v libx264 -tune stillimage -c:a aac -shortest slideshow.mp4`,
    outputs: ["slideshow.mp4"],
  },
  {
    name: "add a silent audio track",
    command: `ffmpeg -i ${VIDEO} -filter_complex "anullsrc=channel_layout=stereo:sample_rate=44100[silence]" -map 0:v -map "[silence]" -c:v copy -c:a aac -shortest silent.mp4`,
    outputs: ["silent.mp4"],
  },
  // subtitles
  {
    name: "burn in subtitles from the .srt input",
    command: `ffmpeg -i ${VIDEO} -i ${SUBTITLES} -vf subtitles=${SUBTITLES} -map 0:v -map 0:a -c:v libx264 -preset veryfast -c:a copy subtitled.mp4`,
    outputs: ["subtitled.mp4"],
  },
  {
    name: "soft subtitles as a stream",
    command: `ffmpeg -i ${VIDEO} -i ${SUBTITLES} -map 0 -map 1 -c:v copy -c:a copy -c:s mov_text -metadata:s:s:0 language=eng softsubs.mp4`,
    outputs: ["softsubs.mp4"],
  },
  {
    name: "convert subtitles to WebVTT",
    command: `ffmpeg -i ${SUBTITLES} subtitles.vtt`,
    outputs: ["subtitles.vtt"],
  },
  // mapping, metadata, remuxing
  {
    name: "pick streams from two inputs",
    command: `ffmpeg -i ${VIDEO} -i ${AUDIO} -map 0:v:0 -map 1:a:0 -map 0:a:0 -c:v copy -c:a aac -disposition:a:0 default -disposition:a:1 0 dual_audio.mkv`,
    outputs: ["dual_audio.mkv"],
  },
  {
    name: "metadata with stream specifiers",
    command: `ffmpeg -i ${VIDEO} -map_metadata -1 -metadata title="My Holiday" -metadata:s:a:0 language=eng -c copy tagged.mp4`,
    outputs: ["tagged.mp4"],
  },
  {
    name: "remux with faststart",
    command: `ffmpeg -i ${VIDEO} -c copy -movflags +faststart faststart.mp4`,
    outputs: ["faststart.mp4"],
  },
  {
    name: "two outputs from one input",
    command: `ffmpeg -i ${VIDEO} -c:v libx264 -preset veryfast -c:a aac large.mp4 -vf scale=160:-2 -c:v libx264 -preset veryfast -c:a aac -b:a 64k small.mp4`,
    outputs: ["large.mp4", "small.mp4"],
  },
  {
    name: "AVIF still",
    command: `ffmpeg -ss 1 -i ${VIDEO} -frames:v 1 -c:v libaom-av1 -cpu-used 8 -still-picture 1 still.avif`,
    outputs: ["still.avif"],
  },
];
