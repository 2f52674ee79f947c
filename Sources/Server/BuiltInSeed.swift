// Made by scripts/embed-seed.sh from seed/birthdayquest.json: edit the seed, then run the script.

/// The shipped seed, built into the executable: a server started in another working
/// directory, or from a copied binary, still seeds its games on first launch.
enum BuiltInSeed {
    /// The seed path this copy stands in for when no such file is in the working directory.
    static let path = "seed/birthdayquest.json"
    /// The file's bytes, final newline included.
    static let text = #"""
{
  "format": 1,
  "game": {"title": "Mia's 30th: BirthdayQuest", "day": 1},
  "characters": [
    {
      "id": "mia",
      "name": "Mia",
      "role": "birthday",
      "tagline": "Turning thirty at the lake house, and pretending she didn't ask for a quest.",
      "fun_facts": [
        "Veterinary nurse who has been bitten by a parrot, a ferret and, once, a very polite Labrador.",
        "Names every houseplant after a Bond villain; Blofeld the fern is thriving.",
        "Still cannot whistle, and has stopped apologising for it.",
        "Won a pub quiz on her own in 2019 with the team name 'Just Mia'."
      ],
      "pin": "4821"
    },
    {
      "id": "sam",
      "name": "Sam",
      "role": "organizer",
      "tagline": "Booked the lake house eleven months ago and has a laminated schedule to prove it.",
      "fun_facts": [
        "Met Mia on the first day of university, queueing for a kettle neither of them owned.",
        "Owns three label makers and uses all of them.",
        "Cries at adverts for building societies. Every time."
      ],
      "pin": "7305"
    },
    {
      "id": "priya",
      "name": "Priya",
      "role": "friend",
      "tagline": "Architect, reluctant early riser, official keeper of the good snacks.",
      "fun_facts": [
        "Shared a flat with Mia for four years and a toaster for three of them.",
        "Can draw a floor plan of any house she has visited, including the bins.",
        "Has a running bet with Theo that nobody remembers the terms of."
      ],
      "pin": "1964"
    },
    {
      "id": "theo",
      "name": "Theo",
      "role": "friend",
      "tagline": "Drives the minibus, picks the music, refuses all criticism of either.",
      "fun_facts": [
        "Mia's cousin, which he mentions whenever he wants the front seat.",
        "Has run four marathons and walked the last mile of every one.",
        "Makes a genuinely excellent lasagne and will tell you so."
      ],
      "pin": "3390"
    },
    {
      "id": "dani",
      "name": "Dani",
      "role": "friend",
      "tagline": "Came for the cake, stayed to film everything on three cameras.",
      "fun_facts": [
        "Works at the same clinic as Mia and once helped her deliver eleven puppies on a Sunday.",
        "Has a kayak called Gerald.",
        "Knows every word of every song from 2009, and nothing after it."
      ],
      "pin": "5517"
    }
  ],
  "challenges": [
    {
      "id": "c01",
      "title": "Sunrise Swim",
      "description": "Be in the lake before eight on Saturday morning: fully in, shoulders under, for a count of thirty. One friend must be awake to witness it, which is its own challenge.",
      "option_b": {
        "title": "Sunrise Run",
        "description": "Run the shore path to the old boathouse and back (about 5 km) before eight on Saturday morning. Walking breaks allowed; turning back early is not."
      },
      "points": 75,
      "difficulty": "hard",
      "category": "physical"
    },
    {
      "id": "c02",
      "title": "Wisdom From Strangers",
      "description": "Ask three people you have never met for their best piece of advice about being in your thirties. Write down all three, even the one about pensions.",
      "option_b": null,
      "points": 35,
      "difficulty": "easy",
      "category": "social"
    },
    {
      "id": "c03",
      "title": "Blind Portrait Gallery",
      "description": "Draw each of your four friends without looking at the paper and without lifting the pen. Sign them, title them, and hang all four on the fridge for the rest of the weekend.",
      "option_b": null,
      "points": 60,
      "difficulty": "medium",
      "category": "creative"
    },
    {
      "id": "c04",
      "title": "A Letter to Mia at Forty",
      "description": "Write a letter to yourself to be opened on your fortieth birthday: what you hope has changed, what you hope hasn't, and one prediction you would bet on. Seal it and give it to Sam, who has promised to keep it for ten years and has already bought a folder.",
      "option_b": null,
      "points": 55,
      "difficulty": "medium",
      "category": "sentimental"
    },
    {
      "id": "c05",
      "title": "The Hour of Yes",
      "description": "For one full hour, say yes to every reasonable suggestion your friends make. Sam decides what counts as reasonable. Nobody is allowed to suggest anything involving the lake after dark.",
      "option_b": null,
      "points": 60,
      "difficulty": "medium",
      "category": "adventure"
    },
    {
      "id": "c06",
      "title": "Thirty Push-ups, Eventually",
      "description": "Do thirty push-ups over the course of one day, in as many sets as you like. Knees count. Someone has to see each set, so announce them loudly.",
      "option_b": null,
      "points": 35,
      "difficulty": "easy",
      "category": "physical"
    },
    {
      "id": "c07",
      "title": "Duet With a Surprise Partner",
      "description": "At Saturday's karaoke, sing a duet with someone you have never sung with before. They pick the song; you do not get a veto.",
      "option_b": {
        "title": "The Power Ballad",
        "description": "Sing a power ballad alone at Saturday's karaoke, key change included, and point at someone in the room during the big note."
      },
      "points": 55,
      "difficulty": "medium",
      "category": "social"
    },
    {
      "id": "c08",
      "title": "The Birthday Anthem",
      "description": "Write a song about turning thirty, at least one verse and a chorus, and perform it at dinner. Theo will provide a backing track whether or not you ask him to.",
      "option_b": null,
      "points": 75,
      "difficulty": "hard",
      "category": "creative"
    },
    {
      "id": "c09",
      "title": "Thirty Thank-Yous",
      "description": "Send thirty thank-you messages to thirty different people, one for each year, and make each one about something specific they did. 'Thanks for everything' does not count; 'thanks for lending me your coat in the snow in 2014' does.",
      "option_b": null,
      "points": 75,
      "difficulty": "hard",
      "category": "sentimental"
    },
    {
      "id": "c10",
      "title": "Night Walk to the Boathouse",
      "description": "Lead the whole group to the old boathouse after dark with one torch between five people and no phone maps. Bring everyone back, count them twice.",
      "option_b": null,
      "points": 75,
      "difficulty": "hard",
      "category": "adventure"
    },
    {
      "id": "c11",
      "title": "The Cartwheel Comeback",
      "description": "Do a cartwheel on the lawn, the way you could at ten. Legs roughly in the air is good enough. Dani will film it in slow motion for reasons of science.",
      "option_b": null,
      "points": 55,
      "difficulty": "medium",
      "category": "physical"
    },
    {
      "id": "c12",
      "title": "Call Someone From Before",
      "description": "Phone someone you haven't spoken to in at least five years, a teacher, an old neighbour, a first boss, and tell them what they meant to you. A phone call: a text is too easy.",
      "option_b": null,
      "points": 75,
      "difficulty": "hard",
      "category": "social"
    },
    {
      "id": "c13",
      "title": "Menu Poet",
      "description": "Give every dish at Saturday dinner a grand name and write the menu card by hand. Theo's lasagne must not be called just 'lasagne'.",
      "option_b": null,
      "points": 35,
      "difficulty": "easy",
      "category": "creative"
    },
    {
      "id": "c14",
      "title": "Then and Now",
      "description": "Recreate a photo of yourself as a child: same pose, same expression, outfit as close as the lake house wardrobe allows. Post the two side by side.",
      "option_b": {
        "title": "How We Met",
        "description": "Recreate the oldest photo you have with one of your friends, pose and props included, and post the two side by side."
      },
      "points": 35,
      "difficulty": "easy",
      "category": "sentimental"
    },
    {
      "id": "c15",
      "title": "Paddle to Heron Island",
      "description": "Kayak across to the island in the middle of the lake (about 2 km each way) in Gerald, Dani's kayak, plant the birthday flag at the top of the island and paddle back. Life jacket on, Theo follows in the rowing boat, and nobody tells Mia's mother until afterwards.",
      "option_b": {
        "title": "The Ridge Walk",
        "description": "Walk the full ridge above the lake, all three summits, about 14 km, with at least two friends, and take a photo of the birthday flag on the highest cairn."
      },
      "points": 100,
      "difficulty": "hard",
      "category": "adventure"
    }
  ],
  "rewards": [
    {
      "id": "r01",
      "from": "Sam",
      "from_character": "sam",
      "title": "Ten Years of Voicemails",
      "teaser": "Sam has been keeping something on an old phone. For a decade.",
      "type": "audio",
      "cost": 75,
      "content": {
        "text": "I never delete your voicemails. This is the best of ten years of them, from 'I think I've locked myself in the lab' to 'I got the job!' to eleven minutes about a hedgehog. Happy thirtieth. I'm keeping the next ten too.",
        "urls": ["https://media.example.com/mia30/sam-voicemails.m4a"]
      }
    },
    {
      "id": "r02",
      "from": "Mom & Dad",
      "from_character": null,
      "title": "A Letter From Home",
      "teaser": "Two pages, two handwritings, one of them much neater.",
      "type": "text",
      "cost": 50,
      "content": {
        "text": "Dear Mia, thirty years ago you arrived three weeks early and have been in a hurry ever since. We have watched you carry injured birds home in your school jumper, move to a city where you knew nobody, and build a life full of people who drive four hours to a lake for you. We are so proud of the person you are, and a little proud of ourselves too. Come home for Sunday lunch soon. Dad says he has fixed the gate. He has not fixed the gate. All our love, Mom & Dad.",
        "urls": []
      }
    },
    {
      "id": "r03",
      "from": "Priya",
      "from_character": "priya",
      "title": "The Map of Us",
      "teaser": "An architect's drawing of somewhere you have both lived.",
      "type": "image",
      "cost": 50,
      "content": {
        "text": "The floor plan of 14 Marlow Road, our flat, from memory, with everything that happened in it marked to scale: the sofa where we watched every series twice, the kitchen fire (small), the spot where you told me you were moving out and we both cried into takeaway. Best four years. Frame it somewhere you'll walk past.",
        "urls": ["https://media.example.com/mia30/priya-marlow-road-plan.png"]
      }
    },
    {
      "id": "r04",
      "from": "Grandma Rosa",
      "from_character": null,
      "title": "Rosa's Lemon Cake, Finally",
      "teaser": "The recipe the family has been asking for since 1987.",
      "type": "video",
      "cost": 100,
      "content": {
        "text": "My darling Mia, everyone has asked me for this recipe and I have told nobody. Now I tell you, because you are thirty and you are sensible and you will not give it to your uncle. Watch the video twice. The secret is in the second lemon. Love, Grandma Rosa.",
        "urls": ["https://media.example.com/mia30/rosa-lemon-cake.mp4"]
      }
    },
    {
      "id": "r05",
      "from": "Theo",
      "from_character": "theo",
      "title": "One Year of Chauffeur Service",
      "teaser": "A voucher. Terms and conditions apply. Theo wrote them.",
      "type": "text",
      "cost": 50,
      "content": {
        "text": "This voucher entitles the bearer, Mia, to twelve lifts anywhere within three hours' drive, one per month, for a year. The chauffeur chooses the music. The chauffeur will not discuss his choice of music. Snacks provided. Valid from today. Happy birthday, cousin, from your favourite (only) cousin who owns a minibus.",
        "urls": []
      }
    },
    {
      "id": "r06",
      "from": "Dani",
      "from_character": "dani",
      "title": "The Weekend, Edited",
      "teaser": "Dani has been filming since Friday. You have been warned.",
      "type": "video",
      "cost": 100,
      "content": {
        "text": "Every camera, every angle, every moment you thought nobody was recording, cut together with the only music I know (2009). Watch it now and again next year. Happy thirtieth to the best person I've ever held a puppy with.",
        "urls": [
          "https://media.example.com/mia30/dani-weekend-cut.mp4",
          "https://media.example.com/mia30/dani-bloopers.mp4"
        ]
      }
    },
    {
      "id": "r07",
      "from": "Leo (little brother)",
      "from_character": null,
      "title": "A Song on Four Strings",
      "teaser": "Your brother learned the ukulele for this. Be kind.",
      "type": "audio",
      "cost": 75,
      "content": {
        "text": "I learned three chords for you and I'm using all of them. It's about the time you taught me to ride a bike by letting go without telling me. I still haven't forgiven you. Happy birthday, Mimi. Leo.",
        "urls": ["https://media.example.com/mia30/leo-ukulele-song.mp3"]
      }
    },
    {
      "id": "r08",
      "from": "The Clinic Crew",
      "from_character": null,
      "title": "Your Patients Say Happy Birthday",
      "teaser": "Twenty-three animals. Twenty-three tiny party hats. Zero bites.",
      "type": "image",
      "cost": 50,
      "content": {
        "text": "We couldn't get you a card everyone could sign, so we got everyone to pose instead. Biscuit the spaniel insisted on being in the middle. The parrot has been forgiven. Happy birthday from all of us at Fernside Vets: the clinic is too quiet without you.",
        "urls": [
          "https://media.example.com/mia30/clinic-party-hats.jpg",
          "https://media.example.com/mia30/clinic-party-hats-outtakes.jpg"
        ]
      }
    },
    {
      "id": "r09",
      "from": "Sam, Priya, Theo & Dani",
      "from_character": null,
      "title": "Same Time Next Year",
      "teaser": "The last gift, from all four of us. Open it at dinner.",
      "type": "text",
      "cost": 50,
      "content": {
        "text": "We've booked the lake house again, same weekend next year, and the year after that. Deposit paid, non-refundable, no excuses. You don't have to do any challenges to get in. You never did. Happy thirtieth, Mia. Love, Sam, Priya, Theo and Dani.",
        "urls": []
      }
    }
  ]
}

"""#
}
